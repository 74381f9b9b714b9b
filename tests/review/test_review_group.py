"""A run's items decided together over HTTP against a real hub: one confirmation repeats each
sentence in the plan's order, each item is checked again when carried out (one that changed is
reported and not run), a refused group decides nothing, and every decision returns to the next
card; a stale card is dismissed, never approved."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.review.queue_forms import DISMISSED
from support.review import TEN, Browser, queue_plan, review_page, review_settings
from support.runs import run_cli, tree_digest

# TEN[:4]: Add a sitemap, Redirect old blog URLs, Check alt texts, resolve dec-1 (plan order).
SITEMAP, REDIRECT, ALT, DEC = range(4)


def _ids(names: dict[str, str]) -> list[str]:
    """The four ids in the plan's order."""
    needles = ("Add a sitemap", "Redirect old blog", "Check alt texts", "dec-1")
    return [next(i for i, n in names.items() if needle in n) for needle in needles]


def _group_form(ids: list[str], **choices: str) -> dict[str, str | list[str]]:
    form: dict[str, str | list[str]] = {"ids": ids, "by": "ana", "next": "/", "after": ""}
    return {**form, **{f"choice-{ids[int(k[1:])]}": v for k, v in choices.items()}}


def test_a_group_is_confirmed_once_and_each_item_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    ids = _ids(names)
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        landing = page.get("/").text
        assert [m for m in re.findall(r'data-approval-id="([\w-]+)"', landing)] == ids
        form = _group_form(ids, c0="approve", c1="reject", c3="approve")
        asked = page.post("/decide-chosen", **form, reason="Out of scope.")
        assert asked.status_code == 303, asked.text
        confirm = page.get(asked.headers["location"]).text
        listed = re.findall(r'data-chosen-id="([\w-]+)" data-chosen="(\w+)"', confirm)
        assert listed == [(ids[0], "approve"), (ids[1], "reject"), (ids[3], "approve")]
        assert "Reason: “Out of scope.”" in confirm and "Yes: approve 2 and reject 1" in confirm
        # Meanwhile the sitemap is rejected by the CLI and dec-1 is resolved on the hub.
        no = ["approvals", "--memory", str(memory), "reject", ids[SITEMAP], "--by", "ben"]
        assert run_cli([*no, "--reason", "Done by hand."], tmp_path, monkeypatch).code == 0
        hub = httpx.post(f"{small_hub.url}/decisions/dec-1/resolve", json={"resolution": "B"})
        assert hub.status_code == 200
        nonce = asked.headers["location"].rsplit("/", 1)[1]
        done = page.post(f"/decide-chosen/{nonce}", decision="confirm")
        assert done.headers["location"] == f"/?at={ids[ALT]}#decided"  # the card left undecided
        said = page.get("/").text
        assert "Not decided: Create task ‘Add a sitemap’" in said
        assert "Rejected by ana: Create task ‘Redirect old blog URLs’" in said
        assert "but the target had changed: nothing ran" in said
        again = page.post(f"/decide-chosen/{nonce}", decision="confirm")  # used once
        assert again.headers["location"] == "/" and "no longer open" in page.get("/").text
    decisions = httpx.get(f"{small_hub.url}/decisions?domain=website", timeout=5).json()
    assert [d["resolution"] for d in decisions["decisions"] if d["id"] == "dec-1"] == ["B"]
    shown = run_cli(
        ["approvals", "--memory", str(memory), "show", ids[SITEMAP]], tmp_path, monkeypatch
    )
    assert "Rejected by ben" in shown.stdout  # the CLI's decision stands


def test_a_refused_group_decides_nothing_and_keeps_what_was_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    ids = _ids(names)
    before = tree_digest(memory)
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/")
        none = page.post("/decide-chosen", **_group_form(ids))
        assert none.status_code == 422 and "Choose approve or reject" in none.text
        bare = page.post("/decide-chosen", **_group_form(ids, c0="approve", c2="reject"))
        assert bare.status_code == 422 and f'data-problem="{ids[ALT]}"' in bare.text
        assert "A reject needs a reason" in bare.text
        assert re.search(f'name="choice-{ids[0]}" value="approve" checked', bare.text)
        nobody = page.post("/decide-chosen", **{**_group_form(ids, c0="approve"), "by": ""})
        assert nobody.status_code == 422 and "Say who decides" in nobody.text
        forged = page.post("/decide-chosen/not-a-nonce", decision="confirm")
        assert forged.headers["location"] == "/"
    assert tree_digest(memory) == before


def test_each_decision_returns_to_the_next_card_and_a_stale_one_is_dismissed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    ids = _ids(names)
    hub = httpx.post(f"{small_hub.url}/decisions/dec-1/resolve", json={"resolution": "B"})
    assert hub.status_code == 200
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        landing = page.get("/").text
        after = re.search(f'name="after-{ids[0]}" value="([\\w-]*)"', landing)
        assert after is not None and after.group(1) == ids[1]
        stale = landing.split(f'id="item-{ids[DEC]}"')[1].split("</section>")[0]
        assert 'data-bar="stale"' in stale and 'value="dismiss"' in stale
        assert 'value="approve"' not in stale  # neither a choice nor a button
        rejected = page.post(f"/approvals/{ids[0]}", decision="reject", by="ana", reason="No.",
                             **{f"after-{ids[0]}": ids[1], "next": "/"})  # fmt: skip
        assert rejected.headers["location"] == f"/?at={ids[1]}#decided"
        there = page.get(rejected.headers["location"]).text
        said = there.index(f'data-decided="{ids[0]}"')  # said where the reviewer returns
        assert there.index('data-group="website.create_task"') < said
        assert said < there.index(f'id="item-{ids[1]}"')
        nonce = page.ask(ids[1], "ana")
        approved = page.post(f"/approvals/{ids[1]}/confirm", decision="confirm", nonce=nonce)
        assert approved.headers["location"] == "/"  # asked without a card to return to
        dismissed = page.post(f"/approvals/{ids[DEC]}", decision="dismiss", by="ana",
                              **{f"reason-{ids[DEC]}": ""})  # fmt: skip
        assert dismissed.status_code == 303
    argv = ["approvals", "--memory", str(memory), "show", ids[DEC], "--json"]
    shown = run_cli(argv, tmp_path, monkeypatch).json()
    assert shown["status"] == "rejected" and shown["reject_reason"] == DISMISSED


def test_runs_keep_a_persons_decisions_apart_and_history_honours_its_domain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:2])
    first, second = names
    base = ["approvals", "--memory", str(memory)]
    yes = [*base, "approve", first, "--by", "ana", "--hub", small_hub.url]
    assert run_cli(yes, tmp_path, monkeypatch).code == 0
    no = [*base, "reject", second, "--by", "ana", "--reason", "Later."]
    assert run_cli(no, tmp_path, monkeypatch).code == 0
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        runs = page.get("/runs").text
        history = page.get("/history?domain=website").text
        elsewhere = page.get("/history?domain=platform").text
    assert runs.count('<tr class="run ') == 1  # the one run of the model
    assert runs.count("data-decision-run=") == 2  # the approval and the rejection, apart
    assert "A person's decisions: 2" in runs
    assert "not reported" in runs and "? / ?" not in runs  # a `file:` answer tells no usage
    assert all(f'data-history-id="{i}"' in history for i in names)
    assert (
        "data-history-id=" not in elsewhere
        and "Nothing has been decided yet in platform" in elsewhere
    )


def test_a_card_held_by_a_mode_says_who_set_it_and_offers_approve_only_when_set_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[5:6])  # resolve_flag fl-1
    (flag,) = names
    policy = ["policy", "set", "--domain", "website", "--operation", "resolve_flag", "--mode"]
    who = ["--by", "dana", "--memory", str(memory)]
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        for mode in ("shadow", "ask"):
            done = run_cli([*policy, mode, *who, "--reason", f"{mode} for the audit"], tmp_path,
                           monkeypatch)  # fmt: skip
            assert done.code == 0, done.stderr
            seen = page.get("/").text
            held = "Paused: resolve_flag is set to shadow in website by dana" in seen
            approvable = f'name="choice-{flag}" value="approve"' in seen
            assert (held, approvable) == ((True, False) if mode == "shadow" else (False, True))
            disabled = re.search(
                r'<button type="submit" name="decision" value="approve" disabled', seen
            )
            assert (disabled is not None) == (mode == "shadow")
