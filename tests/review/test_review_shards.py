"""One page for a fleet: `custodian review --memory A --memory B` shows every shard's queue, and
each decision is carried out in the shard its item lives in, under that shard's domain lock, and
journaled there (review/shards.py)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ConfigError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.settings import load_settings
from support.review import Browser, agreed, review_page, review_settings
from support.runs import CANON, hub_get, plan_response, run_cli
from support.spine import journal


def _queue(
    where: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, domain: str, ws: str, titles: list[str]
) -> tuple[Path, list[str]]:
    """One real run of `domain` in its own shard's memory that queues a create_task per title."""
    where.mkdir(parents=True)
    proposals = [
        {"operation": "create_task", "rationale": "Needed.",
         "params": {"workstream_id": ws, "title": t}}
        for t in titles
    ]  # fmt: skip
    (where / "answer.md").write_text(plan_response({"proposals": proposals}), encoding="utf-8")
    memory = where / "memory"
    argv = ["run", "--domain", domain, "--hub", hub.url, "--llm", "file:answer.md"]
    done = run_cli([*argv, "--memory", str(memory), "--canon", str(CANON), "--json"], where, mp)
    assert done.code == 0, done.stderr
    return memory, [q["approval_id"] for q in done.json()["queued"]]


def _decided(memory: Path, domain: str) -> dict[str, str]:
    """Approval id -> the decision its shard's journal records."""
    records = journal(memory, domain)
    return {
        r.data["approval_id"]: r.data["decision"] for r in records if r.kind == "approval_decided"
    }


def test_one_page_decides_every_shard_in_its_own_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    web, web_ids = _queue(tmp_path / "shard-0", monkeypatch, small_hub, "website", "web-ws-1",
                          ["Add a sitemap", "Check alt texts"])  # fmt: skip
    runners = ["Pin the runner image", "Drop the old runners"]
    plat, plat_ids = _queue(
        tmp_path / "shard-1", monkeypatch, small_hub, "platform", "plat-ws-1", runners
    )
    one = review_settings(web, small_hub.url, tmp_path)
    settings = replace(one, shard_memory=(web, plat))
    with review_page(settings) as server:
        page = Browser(server)
        landing = page.get("/").text
        # Both shards' items on one page, with each domain's count.
        assert all(f'data-approval-id="{i}"' in landing for i in web_ids + plat_ids)
        assert 'data-domain-count="platform">platform <span class="count">2<' in landing
        assert 'data-domain-count="website">website <span class="count">2<' in landing
        assert page.client.get(f"/approvals/{plat_ids[0]}").status_code == 200
        runs = page.get("/runs").text  # every shard's runs, domain by domain
        assert runs.index('data-domain="platform"') < runs.index('data-domain="website"')
        # A run holds platform in its shard: the website shard is not held up by it.
        with RunLock(plat, "platform", run_id="r-busy"):
            held = page.post(f"/approvals/{plat_ids[0]}", decision="reject", by="ana",
                             reason="Not now.")  # fmt: skip
            assert held.status_code == 303
            nonce = page.ask(web_ids[0], "ana")
            done = page.post(f"/approvals/{web_ids[0]}/confirm", decision="confirm", nonce=nonce)
            assert done.status_code == 303
            said = page.get("/").text
        assert "Approved and executed: created task ‘Add a sitemap’" in said
        assert "Rejection kept: " in said and "A run is working on platform right now" in said
        # The lock is free: a decision in the platform shard is carried out there.
        rejected = page.post(f"/approvals/{plat_ids[1]}", decision="reject", by="ana",
                             reason="Keep them a month.")  # fmt: skip
        assert rejected.status_code == 303
        history = page.get("/history").text
        assert f'data-history-id="{web_ids[0]}"' in history
        assert f'data-history-id="{plat_ids[1]}"' in history
    # Each decision is journaled in its own shard, and only there; its file too.
    assert _decided(web, "website") == {web_ids[0]: "approved"}
    # The rejection recorded while platform was held is carried out by the next decision there.
    assert _decided(plat, "platform") == dict.fromkeys(plat_ids, "rejected")
    assert not any((web / "approvals" / f"{i}.json").exists() for i in plat_ids)
    assert {ApprovalStore(plat).get(i, verify=False).status for i in plat_ids} == {"rejected"}
    summary = hub_get(small_hub, "/domains/website/summary")
    assert "Add a sitemap" in str(summary)


def test_an_item_in_two_shards_is_decided_in_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    web, web_ids = _queue(tmp_path / "shard-0", monkeypatch, small_hub, "website", "web-ws-1",
                          ["Add a sitemap", "Check alt texts"])  # fmt: skip
    copy = tmp_path / "shard-1" / "memory"
    (copy / "approvals").mkdir(parents=True)
    shutil.copy(web / "approvals" / f"{web_ids[0]}.json", copy / "approvals")
    settings = replace(review_settings(web, small_hub.url, tmp_path), shard_memory=(web, copy))
    with review_page(settings) as server:
        page = Browser(server)
        landing = page.get("/").text
        # Shown in neither: the other item only, and counted once.
        assert f'data-approval-id="{web_ids[0]}"' not in landing
        assert f'data-approval-id="{web_ids[1]}"' in landing
        assert 'data-domain-count="website">website <span class="count">1<' in landing
        refused = page.post(f"/approvals/{web_ids[0]}", decision="reject", by="ana", reason="No.")
        assert refused.status_code == 303
        assert "decided or expired meanwhile" in page.get("/").text
        assert page.client.get(f"/approvals/{web_ids[0]}").status_code == 404
    assert _decided(web, "website") == {}
    assert ApprovalStore(web).get(web_ids[0], verify=False).status == "pending"


def test_each_shard_memory_is_named_once(tmp_path: Path) -> None:
    flags = {"memory": "a", "shard_memory": ["a", "b"]}
    got = load_settings(flags, {}, tmp_path, domain_required=False, hub_required=False)
    assert got.shard_memory == (tmp_path / "a", tmp_path / "b")
    assert got.memory_dir == tmp_path / "a"
    twice = {"memory": "a", "shard_memory": ["a", "b", "./a"]}
    with pytest.raises(ConfigError, match="given twice: give each shard's memory"):
        load_settings(twice, {}, tmp_path, domain_required=False, hub_required=False)
    alone = {"memory": "a", "shard_memory": ["a"]}
    one = load_settings(alone, {}, tmp_path, domain_required=False, hub_required=False)
    assert one.shard_memory == ()


def test_a_grant_from_the_fleet_page_is_issued_in_its_domain_s_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plat, _ = _queue(tmp_path / "shard-0", monkeypatch, small_hub, "platform", "plat-ws-1",
                     ["Pin the runner image"])  # fmt: skip
    web = agreed(tmp_path / "shard-1", monkeypatch, small_hub)  # ten approved: a suggestion
    settings = replace(review_settings(plat, small_hub.url, tmp_path), shard_memory=(plat, web))
    with review_page(settings) as server:
        page = Browser(server)
        listed = page.get("/standing").text
        assert "?domain=platform" in listed and "?domain=website" in listed
        standing = page.get("/standing?domain=website").text
        assert "Suggested (10 of 10 approved" in standing
        form = {"domain": "website", "operation": "create_task", "where": "", "max": "10",
                "expires": "7d", "by": "ana", "reason": "ten of ten approved",
                "decision": "issue"}  # fmt: skip
        asked = page.post("/standing/issue", **form)
        assert asked.status_code == 303, asked.text
        nonce = asked.headers["location"].rsplit("/", 1)[1]
        done = page.post("/standing/confirm", decision="confirm", nonce=nonce)
        assert done.status_code == 303
        assert "Issued grant-" in page.get(done.headers["location"]).text
    for memory, count in ((web, 1), (plat, 0)):
        argv = ["grants", "list", "--json", "--memory", str(memory)]
        listed_here = run_cli(argv, tmp_path, monkeypatch)
        assert len(json.loads(listed_here.stdout)) == count, memory


def test_the_command_takes_a_memory_per_shard_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["review", "--memory", "shard-0", "--memory", "shard-1", "--memory", "shard-0"]
    refused = run_cli(argv, tmp_path, monkeypatch)
    assert refused.code != 0 and "shard-0 is given twice" in refused.stderr
    assert not (tmp_path / "shard-1").exists()  # refused before anything was made or bound
