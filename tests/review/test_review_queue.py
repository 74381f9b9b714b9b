"""The pending queue's forms over HTTP against a real hub: the confirmation is bound to the item,
a refused reject keeps what was typed, the name is remembered, decisions while a run holds the
domain are recorded, and decided items keep their history (page and `approvals show`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.review._sentence import Facts, card_sentence, done_sentence
from custodian_runtime.review.cards import canon_diff
from support.review import (
    REJECT_REASON,
    TEN,
    Browser,
    hub_state,
    queue_plan,
    review_page,
    review_settings,
)
from support.runs import run_cli, tree_digest


def _find(names: dict[str, str], operation: str, needle: str) -> str:
    (found,) = [i for i, n in names.items() if n.startswith(operation) and needle in n]
    return found


def test_a_confirm_is_bound_to_the_item_and_used_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    sitemap = _find(names, "create_task", "Add a sitemap")
    resolve = _find(names, "resolve_decision", "dec-1")
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/")
        # Asked, then decided elsewhere (the CLI) before the confirm: refused, nothing runs.
        nonce = page.ask(resolve, "ana")
        no = ["approvals", "--memory", str(memory), "reject", resolve, "--by", "ben"]
        assert run_cli([*no, "--reason", REJECT_REASON], tmp_path, monkeypatch).code == 0
        before = (tree_digest(memory), hub_state(small_hub))
        stale = page.post(f"/approvals/{resolve}/confirm", decision="confirm", nonce=nonce)
        assert stale.status_code == 303
        landing = page.get("/").text
        assert "Not approved: Resolve decision dec-1 ‘Which analytics vendor?’" in landing
        assert "changed or was decided since you asked to approve it, so nothing ran" in landing
        assert (tree_digest(memory), hub_state(small_hub)) == before
        # A confirm carries out the approval once; the same confirm again is refused.
        nonce = page.ask(sitemap, "ana")
        done = page.post(f"/approvals/{sitemap}/confirm", decision="confirm", nonce=nonce)
        assert done.status_code == 303
        # A HEAD request (a link checker, a prefetch) answers without taking the flash away.
        assert page.client.head("/").status_code == 200
        flash = page.get("/").text
        assert "Approved and executed: created task ‘Add a sitemap’ under workstream" in flash
        assert (
            "the hub answered hub id" in flash and "{" not in flash.split("data-decided")[1][:300]
        )
        again = page.post(f"/approvals/{sitemap}/confirm", decision="confirm", nonce=nonce)
        assert again.status_code == 303
        assert "this confirmation is no longer open" in page.get("/").text
        # Another session cannot use this session's confirmation.
        other = Browser(server)
        other.get("/")
        third = _find(names, "create_task", "Redirect")
        nonce = page.ask(third, "ana")
        assert other.get(f"/approvals/{third}/confirm/{nonce}").status_code == 404
        stolen = other.post(f"/approvals/{third}/confirm", decision="confirm", nonce=nonce)
        assert stolen.status_code == 303
        assert f'data-approval-id="{third}"' in page.get("/").text  # still pending


def test_a_reject_without_reason_comes_back_with_everything_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    first = next(iter(names))
    before = tree_digest(memory)
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/")
        refused = page.post(f"/approvals/{first}", decision="reject", by="Zoë <b>", reason=" ")
        assert refused.status_code == 422
        assert f'data-problem="{first}"' in refused.text
        assert "A reject needs a reason" in refused.text
        assert 'value="Zoë &lt;b&gt;"' in refused.text  # kept, and escaped
        cookie = refused.headers["set-cookie"]
        assert cookie.startswith(f"custodian_review_by_{server.port}=Zo%C3%AB%20%3Cb%3E;")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert "Expires" not in cookie and "Max-Age" not in cookie  # for the session only
        # The name is remembered: the next page has it in the "by" field of the run's group.
        assert page.get("/").text.count('value="Zoë &lt;b&gt;"') == 1
        many = page.post("/reject-selected", decision="reject", by="ana", reason="",
                         ids=list(names)[:2])  # fmt: skip
        assert many.status_code == 422 and 'data-problem="bulk"' in many.text
        assert all(f'data-selected-id="{i}"' in many.text for i in list(names)[:2])
    assert tree_digest(memory) == before


def test_filters_counts_history_and_the_item_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN)
    flag = _find(names, "resolve_flag", "fl-1")
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        landing = page.get("/").text
        assert 'data-domain-count="website">website <span class="count">10</span>' in landing
        creates = page.get("/?operation=create_task").text
        assert creates.count("data-approval-id=") == 4
        assert page.get("/?domain=platform").text.count("data-approval-id=") == 0
        assert page.client.get(f"/approvals/{flag}").status_code == 200
        many = page.post("/reject-selected", decision="reject", by="cy", reason="Later.",
                         ids=[flag], next="/?operation=resolve_flag")  # fmt: skip
        assert many.headers["location"] == "/?operation=resolve_flag"
        item = page.get(f"/approvals/{flag}").text
        assert 'data-fate="rejected"' in item and "Rejected by cy on " in item
        history = page.get("/history").text
        assert f'data-history-id="{flag}"' in history
        assert "Resolve flag fl-1 ‘Image CDN credentials missing’ in website" in history
        assert page.client.get("/approvals/apr-nothing").status_code == 404
    shown = run_cli(["approvals", "--memory", str(memory), "show", flag], tmp_path, monkeypatch)
    assert "fate:          Rejected by cy on " in shown.stdout and ": Later." in shown.stdout


def test_a_decision_while_a_run_holds_the_domain_is_recorded_and_said_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    first, second = list(names)[:2]
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        page.get("/")
        with RunLock(memory, "website", run_id="r-busy"):
            rejected = page.post(f"/approvals/{first}", decision="reject", by="ana", reason="No.")
            assert rejected.status_code == 303
            nonce = page.ask(second, "ana")
            page.post(f"/approvals/{second}/confirm", decision="confirm", nonce=nonce)
            landing = page.get("/").text
    assert "Rejection kept: " in landing and "Approval kept: " in landing
    assert "A run is working on website right now" in landing
    assert "locked" not in landing and "pid" not in landing
    assert landing.count("is kept: a run is working on website right now") == 2
    files = {i: (memory / "approvals" / f"{i}.json").read_text() for i in (first, second)}
    statuses = {i: ApprovalItem.model_validate_json(text).status for i, text in files.items()}
    assert statuses == {first: "pending", second: "pending"}  # carried out when the run ends


def test_sentences_name_titles_and_the_change() -> None:
    item = ApprovalItem.model_validate(
        {"id": "apr-1", "domain": "website", "operation": "set_task_status",
         "params": {"task_id": "web-t-05", "status": "cancelled"}, "run_id": "r1",
         "fingerprint": "f", "precondition": {"task": {"id": "web-t-05", "status": "todo"}},
         "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-15T00:00:00Z"}
    )  # fmt: skip
    facts = Facts(titles={"web-t-05": "Set up redirects"})
    assert card_sentence(item, facts) == (
        "Cancel task web-t-05 ‘Set up redirects’ (todo → cancelled) in website"
    )
    assert done_sentence(item, facts).startswith("cancelled task web-t-05 ‘Set up redirects’")
    assert card_sentence(item, Facts()) == "Cancel task web-t-05 (todo → cancelled) in website"
    odd = item.model_copy(update={"operation": "fo\x1b[2Jo", "params": {"value": "x"}})
    assert card_sentence(odd, Facts()) == "Run fo\\x1b[2Jo, an operation Custodian does not know"


def test_a_canon_diff_marks_each_line() -> None:
    lines = canon_diff("a\nb\nc\n", "a\nB\nc\nd\n", "domains/x.md")
    assert [(d.kind, d.text) for d in lines] == [
        ("head", "--- domains/x.md (now)"),
        ("head", "+++ domains/x.md (proposed)"),
        ("hunk", "@@ -1,3 +1,4 @@"),
        ("ctx", " a"),
        ("del", "-b"),
        ("add", "+B"),
        ("ctx", " c"),
        ("add", "+d"),
    ]


def test_every_new_page_escapes_model_text_and_holds_no_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    params = {"workstream_id": "web-ws-1", "title": "<img src=x onerror=alert(1)>"}
    evil = {"operation": "create_task", "rationale": "<script>alert(1)</script>", "params": params}
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, [evil])
    (approval_id,) = names
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        pages = [page.get("/").text, page.get(f"/reject-selected?ids={approval_id}").text]
        nonce = page.ask(approval_id, "ana")
        pages.append(page.get(f"/approvals/{approval_id}/confirm/{nonce}").text)
        page.post(f"/approvals/{approval_id}", decision="reject", by="ana", reason="No.")
        pages += [page.get("/history").text, page.get(f"/approvals/{approval_id}").text]
    for html in pages:
        assert "<img" not in html and "style=" not in html
        # The page's one script is its own file (CSP script-src 'self'); none is inline.
        assert html.count("<script") == 1 and '<script src="/static/review.js" defer>' in html
        assert "‘&lt;img src=x onerror=alert(1)&gt;’" in html
