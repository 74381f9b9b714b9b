"""The Standing page over HTTP against a real hub: modes, grants with uses left and the agreement
report; a grant issued from a suggestion and revoked, each only through its confirmation and
through the same functions as `custodian grants issue|revoke`; items run under a grant shown
with the grant's id on the runs, history and note pages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.standing_store import StandingStore
from support.review import Browser, agreed, create, queue_plan, review_page, review_settings
from support.runs import CANON, hub_get, run_cli, tree_digest
from support.spine import journal


def _grants(memory: Path, tmp_path: Path, mp: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    listed = run_cli(["grants", "list", "--json", "--memory", str(memory)], tmp_path, mp)
    assert listed.code == 0, listed.stderr
    return list(json.loads(listed.stdout))


def _nonce(page: Browser, answer: Any) -> str:
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith("/standing/confirm/")
    return str(location.rsplit("/", 1)[1])


def _issue(page: Browser, **extra: str) -> Any:
    form = {"domain": "website", "operation": "create_task", "where": "", "max": "10",
            "expires": "7d", "by": "ana", "reason": "ten of ten approved",
            "decision": "issue"}  # fmt: skip
    return page.post("/standing/issue", **{**form, **extra})


def _confirm(page: Browser, nonce: str) -> str:
    done = page.post("/standing/confirm", decision="confirm", nonce=nonce)
    assert done.status_code == 303
    return page.get(done.headers["location"]).text


def test_a_grant_is_issued_from_a_suggestion_only_through_its_confirmation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = agreed(tmp_path, monkeypatch, small_hub)
    hub_id = hub_get(small_hub, "/health")["hub_id"]
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        standing = page.get("/standing?domain=website").text
        form = standing.split('data-issue-operation="create_task"')[1].split("</form>")[0]
        assert 'name="max" min="1" max="1000" value="10"' in form
        assert 'name="expires" size="5" value="7d"' in form
        assert "custodian grants issue --domain website --operation create_task" in standing
        assert "Suggested (10 of 10 approved, lower bound 0.72, none rejected in this class)" in (
            standing
        )
        nonce = _nonce(page, _issue(page))
        assert _grants(memory, tmp_path, monkeypatch) == []  # asked, not issued
        asked = page.get(f"/standing/confirm/{nonce}").text
        sentence = re.search(r'<p class="sentence-big">(.*?)</p>', asked)
        assert sentence is not None
        assert sentence.group(1).startswith(
            "Let Custodian create tasks (create_task) in website without a card, at most 10 "
            "times, until "
        )
        assert sentence.group(1).endswith(f"UTC, on hub hub_id:{hub_id}.")
        # Another session can neither see nor use this session's confirmation.
        other = Browser(server)
        other.get("/standing")
        assert other.get(f"/standing/confirm/{nonce}").status_code == 404
        assert "no longer open" in _confirm(other, nonce)
        assert _grants(memory, tmp_path, monkeypatch) == []
        after = _confirm(page, nonce)
        [grant] = _grants(memory, tmp_path, monkeypatch)
        assert f"Issued {grant['id']}: Let Custodian create tasks" in after
        assert (grant["operation"], grant["max_uses"], grant["by"]) == ("create_task", 10, "ana")
        assert grant["hub_id"] == f"hub_id:{hub_id}" and grant["state"] == "live"
        row = after.split(f'data-grant-id="{grant["id"]}"')[1].split("</tr>")[0]
        assert "0 / 10" in row and '<td data-label="left">10</td>' in row and "live" in row
        assert f"issued {grant['id']}: Let Custodian create tasks" in after  # policy changes
        # What the live grant covers is suggested no more, and the panel says why.
        report = after.split('data-report-operation="create_task"')[1].split("</tbody>")[0]
        assert "Suggested (" not in report
        assert f"No suggestion: a live grant covers it: {grant['id']}" in report
        # The same confirmation again is refused, and nothing more is issued.
        assert "no longer open" in _confirm(page, nonce)
        assert len(_grants(memory, tmp_path, monkeypatch)) == 1


def test_a_changed_suggestion_a_never_grantable_operation_and_a_bad_duration_issue_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = agreed(tmp_path, monkeypatch, small_hub)
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/standing?domain=website")
        nonce = _nonce(page, _issue(page))
        cli = ["grants", "issue", "--domain", "website", "--operation", "create_task",
               "--max", "2", "--expires", "1d", "--by", "bo", "--reason", "x",
               "--hub", small_hub.url]  # fmt: skip
        assert run_cli([*cli, "--memory", str(memory)], tmp_path, monkeypatch).code == 0
        refused = _confirm(page, nonce)
        assert "Nothing was done: Let Custodian create tasks" in refused
        assert "changed since you asked" in refused
        assert len(_grants(memory, tmp_path, monkeypatch)) == 1  # the CLI's only
        # A revoke asked for, then made elsewhere first: the confirmation is refused.
        [grant] = _grants(memory, tmp_path, monkeypatch)
        form = {"domain": "website", "grant": grant["id"], "by": "bo", "reason": "too broad"}
        nonce = _nonce(page, page.post("/standing/revoke", **form, decision="revoke"))
        cli = ["grants", "revoke", grant["id"], "--by", "cy", "--reason", "ended"]
        assert run_cli([*cli, "--memory", str(memory)], tmp_path, monkeypatch).code == 0
        assert "changed since you asked" in _confirm(page, nonce)
        revokes = [r for r in journal(memory) if r.kind == "grant_revoked"]
        assert [r.data["by"] for r in revokes] == ["cy"]
        before = tree_digest(memory)
        never = _issue(page, operation="write_canon", reason="keep <b>typed</b>")
        assert never.status_code == 422
        assert 'data-problem="issue:write_canon"' in never.text
        assert "write_canon is never grantable" in never.text
        assert "keep &lt;b&gt;typed&lt;/b&gt;" in never.text  # kept, and escaped
        long = _issue(page, expires="45d", where="status=todo")
        assert long.status_code == 422 and "a grant lasts at most 30 days" in long.text
        form = long.text.split('data-issue-operation="create_task"')[1].split("</form>")[0]
        assert ">status=todo</textarea>" in form and 'value="45d"' in form
        no_reason = _issue(page, reason=" ")
        assert no_reason.status_code == 422 and "A grant needs a reason" in no_reason.text
    assert tree_digest(memory) == before


def test_without_a_hub_the_page_says_so_and_issues_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = agreed(tmp_path, monkeypatch, small_hub)
    flags = {"memory": str(memory), "canon": str(CANON)}
    from custodian_runtime.settings import load_settings

    settings = load_settings(flags, {}, tmp_path, domain_required=False, hub_required=False)
    assert settings.hub is None
    before = tree_digest(memory)
    with review_page(settings) as server:
        page = Browser(server)
        page.get("/standing?domain=website")
        unknown = page.get("/standing?domain=nosuch").text
        assert "No journal or approval item in memory/ names the domain &#39;nosuch&#39;" in unknown
        assert (
            page.post("/standing/issue", domain="nosuch", operation="create_task").status_code
            == 422
        )
        page.get("/standing?domain=website")
        refused = _issue(page)
        assert refused.status_code == 422
        assert "This review page has no hub configured" in refused.text
    assert tree_digest(memory) == before


def test_a_revoke_needs_its_confirmation_and_binds_a_running_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = agreed(tmp_path, monkeypatch, small_hub)
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/standing?domain=website")
        _confirm(page, _nonce(page, _issue(page)))
        [grant] = _grants(memory, tmp_path, monkeypatch)
        form = {"domain": "website", "grant": grant["id"], "by": "bo", "decision": "revoke"}
        no_reason = page.post("/standing/revoke", **form, reason="")
        assert no_reason.status_code == 422
        assert f'data-problem="revoke:{grant["id"]}"' in no_reason.text
        nonce = _nonce(page, page.post("/standing/revoke", **form, reason="too broad"))
        asked = page.get(f"/standing/confirm/{nonce}").text
        assert f"Revoke {grant['id']}, which lets Custodian create tasks" in asked
        assert _grants(memory, tmp_path, monkeypatch)[0]["state"] == "live"
        with RunLock(memory, "website", run_id="r-busy"):
            said = _confirm(page, nonce)
            # Kept, not journaled, while the domain is busy: it binds already, and lists so.
            assert _grants(memory, tmp_path, monkeypatch)[0]["state"] == "revoked"
            kept = StandingStore(memory).standing("website").grant(grant["id"])
            assert kept is not None and not kept.revoked
        assert f"Revoked: {grant['id']}, which lets Custodian create tasks" in said
        assert "the revoke binds that run at once, and is journaled when it ends" in said
        assert f'data-grant-id="{grant["id"]}" data-state="revoked"' in said
        assert f'data-revoke-grant="{grant["id"]}"' not in said
        assert "no longer open" in _confirm(page, nonce)
    carried = run_cli(["grants", "list", "--memory", str(memory)], tmp_path, monkeypatch)
    assert f"{grant['id']} revoked" in carried.stdout
    done = run_cli(["grants", "revoke", grant["id"], "--by", "bo", "--reason", "again",
                    "--memory", str(memory)], tmp_path, monkeypatch)  # fmt: skip
    assert done.code == 0
    assert _grants(memory, tmp_path, monkeypatch)[0]["state"] == "revoked"


def test_modes_uses_left_and_an_item_run_under_a_grant_are_shown_with_the_grant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = agreed(tmp_path, monkeypatch, small_hub)
    mode = ["policy", "set", "--domain", "website", "--operation", "create_workstream",
            "--mode", "shadow", "--by", "cy", "--reason", "trying it out",
            "--memory", str(memory)]  # fmt: skip
    assert run_cli(mode, tmp_path, monkeypatch).code == 0
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/standing?domain=website")
        _confirm(page, _nonce(page, _issue(page, max="3")))
        [grant] = _grants(memory, tmp_path, monkeypatch)
        queue_plan(tmp_path, monkeypatch, small_hub, [create("Add a sitemap")])
        standing = page.get("/standing?domain=website").text
        modes = standing.split('data-mode-operation="create_workstream"')[1].split("</tr>")[0]
        assert "shadow" in modes and "cy" in modes and "trying it out" in modes
        assert "default" in standing.split('data-mode-operation="create_task"')[1][:200]
        row = standing.split(f'data-grant-id="{grant["id"]}"')[1].split("</tr>")[0]
        assert "1 / 3" in row and '<td data-label="left">2</td>' in row
        assert "set create_workstream to shadow" in standing
        link = f'<a href="/standing?domain=website#grant-{grant["id"]}">{grant["id"]}</a>'
        for path in ("/runs", "/history"):
            shown = page.get(path).text
            assert f"executed (grant {link})" in shown, path
        notes = re.findall(r'href="/notes/([^"]+)"', page.get("/runs").text)
        shown = [page.get(f"/notes/{n}").text for n in notes]
        assert sum(f"executed (grant {link})" in html for html in shown) == 1
    summary = hub_get(small_hub, "/domains/website/summary")
    assert "Add a sitemap" in json.dumps(summary)  # written to the hub without a card
