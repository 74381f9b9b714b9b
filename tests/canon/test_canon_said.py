"""A canon write is a canon write in every sentence, and an executed one keeps what it changed:
the file as it was rides on the item's result, and the card's diff is that change; a pending one
that removes more than a few lines says so in words, and its confirmations show its diff open."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.review.cards import diff_of, kept_in
from custodian_runtime.review.views import Views
from support.review import Browser, review_page, review_settings
from support.runs import CANON, plan_response, run_cli
from support.spine import journal

NEW = "# Website\n\nShip the relaunch before the trade fair.\n"
WRITE = {
    "operation": "write_canon",
    "rationale": "the launch date moved",
    "params": {"path": "domains/website.md", "content": NEW},
}


def test_an_approved_canon_write_says_the_canon_and_keeps_its_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon, memory = tmp_path / "canon", tmp_path / "memory"
    shutil.copytree(CANON, canon)
    was = (canon / "domains" / "website.md").read_text("utf-8")
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": [WRITE]}), "utf-8")
    flags = ["--memory", str(memory), "--canon", str(canon)]
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    summary = run_cli([*argv, *flags, "--json"], tmp_path, monkeypatch).json()
    (queued,) = summary["queued"]
    item_id = queued["approval_id"]
    views = Views(review_settings(memory, small_hub.url, tmp_path, canon))
    card = views.get(f"/approvals/{item_id}", "csrf").body.decode()
    assert "waits because" in card and "never granted: the canon is the project" in card
    queue = views.get("/", "csrf").body.decode()
    assert "Unchanged in the canon since it was proposed." in queue
    assert "Unchanged on the hub" not in queue and "In the canon now" in queue
    approve = ["approvals", "approve", item_id, "--by", "alex", "--hub", small_hub.url, *flags]
    done = run_cli(approve, tmp_path, monkeypatch)
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"{item_id}: Approved by alex on ")
    assert "the canon file domains/website.md was written" in done.stdout
    assert "hub" not in done.stdout and "{" not in done.stdout, "a sentence, not JSON"
    item = ApprovalStore(memory).get(item_id)
    assert item is not None and item.result is not None
    assert item.result["before"] == was, "the file as it was is kept on the item"
    diff = diff_of(canon, item) or ()
    assert any(d.kind == "add" and "trade fair" in d.text for d in diff)
    assert any(d.kind == "del" for d in diff), "the lines it replaced are shown, not an empty diff"
    assert kept_in(item) == "in the canon"
    shown = run_cli(["approvals", "show", item_id, *flags[:2]], tmp_path, monkeypatch).stdout
    shown = " ".join(shown.split())  # the fate is wrapped over lines
    assert "the canon file domains/website.md was written" in shown
    assert "hub answered" not in shown
    counted = f"before: {len(was.splitlines())} lines (the file before the write; in --json)"
    assert counted in shown
    assert "Leave to people" not in shown, "the old file is counted in show, not printed"
    as_json = run_cli(["approvals", "show", item_id, "--json", *flags[:2]], tmp_path, monkeypatch)
    assert json.loads(as_json.stdout)["result"]["before"] == was
    decided = [r for r in journal(memory) if r.kind == "approval_decided"]
    inspected = run_cli(["inspect", decided[0].run_id, *flags[:2]], tmp_path, monkeypatch).stdout
    assert f"approval {item_id} at " in inspected
    assert "approved by alex\n" in inspected and "None" not in inspected, "no note, none said"
    assert "the canon file domains/website.md was written" in inspected
    assert "hub_id" not in inspected and "status None" not in inspected
    page = views.get(f"/approvals/{item_id}", "csrf").body.decode()
    assert "trade fair" in page, "the executed item's page shows the change it made"
    assert "before → written" in page and "domains/website.md (before)" in page
    assert "the canon file it wrote" in page and "the hub&#39;s answer" not in page
    assert page.count("Leave to people") == 1, "the file before is in the diff, not a cell too"
    history = views.get("/history", "csrf").body.decode()
    assert "What changed in domains/website.md" in history and "trade fair" in history
    assert "the canon file domains/website.md was written (3 lines, it had " in history


def test_the_page_confirms_a_canon_write_with_its_rationale_and_says_the_canon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon, memory = tmp_path / "canon", tmp_path / "memory"
    shutil.copytree(CANON, canon)
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": [WRITE]}), "utf-8")
    flags = ["--memory", str(memory), "--canon", str(canon)]
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    (queued,) = run_cli([*argv, *flags, "--json"], tmp_path, monkeypatch).json()["queued"]
    item_id = queued["approval_id"]
    with review_page(review_settings(memory, small_hub.url, tmp_path, canon)) as server:
        page = Browser(server)
        removes = "This write removes 25 of 26 lines of domains/website.md (keeps 1, writes 3)."
        assert removes in page.get("/").text  # said on the card, where a diff is on demand
        assert removes in page.get(f"/approvals/{item_id}").text  # and on the item's own page
        chosen = {"ids": item_id, "by": "alex", f"choice-{item_id}": "approve"}
        asked = page.post("/decide-chosen", **chosen, decision="choose")
        group = page.get(asked.headers["location"]).text
        nonce = page.ask(item_id, "alex")
        confirm = page.get(f"/approvals/{item_id}/confirm/{nonce}").text
        assert "Rationale: the launch date moved" in confirm
        for seen in (confirm, group):  # the removal in words, and the diff open, not on demand
            assert removes in seen and f'data-diff="{item_id}"' in seen
            assert '<details class="diff"' not in seen and seen.count('class="diff-del"') == 25
        done = page.post(f"/approvals/{item_id}/confirm", decision="confirm", nonce=nonce)
        assert done.status_code == 303
        flash = " ".join(page.get("/").text.split())
    assert "the canon file domains/website.md was written" in flash
    assert "hub answered" not in flash
