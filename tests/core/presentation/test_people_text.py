"""What a person reads at a terminal: the approval queue and the run summary, within 100 columns.

Every value may come from the model or the hub: it is shown whole where there is room, cut with
`…` where there is not, and never as a control character a terminal would obey.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.outcomes import ItemOutcome
from custodian_runtime.core.presentation.approval_text import fate, list_lines, show_text
from custodian_runtime.core.presentation.display import (
    age,
    columns,
    fit,
    item_line,
    params_line,
    why,
)
from custodian_runtime.run import RunResult
from support.authority import plan_of, proposal, website

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RAW = ("\x1b", "\r", "\n", "\x07", "\x9b", "\u202e")


def _item(**changes: Any) -> ApprovalItem:
    fields: dict[str, Any] = {
        "id": "apr-c4a190ea8bec",
        "domain": "website",
        "operation": "create_task",
        "params": {
            "workstream_id": "web-ws-2",
            "title": "Find the cause of the checkout p95 regression",
            "status": "todo",
        },
        "rationale": "web-evt-11 reports p95 at 1.3 s, up from 1.1 s",
        "run_id": "r20261130T090000Z-abc123",
        "fingerprint": "c4a190ea8bec" + "0" * 52,
        "precondition": {"workstream": {"id": "web-ws-2", "status": "active"}},
        "created_at": NOW - timedelta(hours=3, minutes=5),
        "expires_at": NOW + timedelta(days=13, hours=20),
    }
    fields.update(changes)
    return ApprovalItem(**fields)


def test_ages_read_as_a_person_says_them() -> None:
    assert [age(timedelta(seconds=s)) for s in (-5, 45, 720, 3 * 3600 + 5, 2 * 86400 + 7)] == [
        "0s",
        "45s",
        "12m",
        "3h",
        "2d",
    ]


def test_fit_cuts_with_an_ellipsis_and_counts_wide_characters_as_two() -> None:
    assert fit("short", 10) == "short"
    assert fit("abcdefghijkl", 8) == "abcdefg…" and columns(fit("abcdefghijkl", 8)) == 8
    wide = "检查结账延迟" * 4
    assert columns(fit(wide, 9)) <= 9 and fit(wide, 9).endswith("…")


def test_params_show_every_key_and_value_quoted_when_needed() -> None:
    line = params_line({"task_id": "web-t-23", "status": "blocked", "title": 'a "b" c', "n": 3})
    assert line == 'task_id=web-t-23 status=blocked title="a \\"b\\" c" n=3'


def test_list_shows_id_status_age_operation_every_param_and_the_rationale() -> None:
    first, second = list_lines(_item(), "pending", NOW, width=200)
    assert first.startswith("apr-c4a190ea8bec  pending    3h  website  create_task  ")
    assert "workstream_id=web-ws-2" in first and "status=todo" in first
    assert 'title="Find the cause of the checkout p95 regression"' in first
    assert second == "    web-evt-11 reports p95 at 1.3 s, up from 1.1 s"


def test_list_lines_fit_in_100_columns_and_show_the_target_then_the_long_value() -> None:
    long_title = "Rework " + "the checkout flow " * 20
    item = _item(params={"workstream_id": "web-ws-2", "title": long_title, "status": "todo"})
    lines = list_lines(item, "pending", NOW, width=100)
    assert all(columns(line) <= 100 for line in lines)
    # What it is about (its target) is whole, then what it says: the title is cut at the end,
    # never to a character, and a short param past it is what the cut takes.
    assert 'workstream_id=web-ws-2 title="Rework the che' in lines[0] and lines[0].endswith("…")
    many = list_lines(_item(rationale="why " * 100), "pending", NOW)
    assert columns(many[1]) == 100 and many[1].endswith("…")


def test_list_and_show_escape_model_text() -> None:
    evil = _item(
        params={"title": "ok\x1b]0;pwned\x07\r\napr-0 executed\u202e"},
        rationale="tidy\x9b2K\nsecond line",
    )
    lines = list_lines(evil, "pending", NOW)
    shown = show_text(evil, "pending", NOW, None)
    assert len(lines) == 2
    for text in ("\n".join(lines), shown):
        assert not [ch for ch in RAW if ch in text.replace("\n", "")]
    assert "\\x1b]0;pwned\\x07" in lines[0] and "tidy\\x9b2K\\nsecond line" in lines[1]
    assert "rationale:     tidy\\x9b2K\\nsecond line\n" in shown
    assert "    ok\\x1b]0;pwned\\x07\\r\n" in shown and "    apr-0 executed\\u202e\n" in shown


def test_show_labels_every_field_with_params_one_per_line_and_dates_with_ages() -> None:
    decided = _item(
        status="rejected",
        decided_at=NOW - timedelta(minutes=10),
        decided_by="ana",
        reject_reason="owned by another team",
    )
    text = show_text(decided, "rejected", NOW, "the seal does not verify")
    assert text.splitlines()[0] == "apr-c4a190ea8bec: create_task (rejected)"
    for line in (
        "domain:        website",
        "status:        rejected",
        "operation:     create_task",
        "params:",
        "  workstream_id: web-ws-2",
        "  title: Find the cause of the checkout p95 regression",
        "  status: todo",
        "rationale:     web-evt-11 reports p95 at 1.3 s, up from 1.1 s",
        "proposed by:   run r20261130T090000Z-abc123",
        "precondition:",
        "  workstream: id=web-ws-2 status=active",
        "created:       2026-11-30 08:55 UTC (3h ago)",
        "expires:       2026-12-14 08:00 UTC (in 13d)",
        "decided:       2026-11-30 11:50 UTC (10m ago)",
        "decided by:    ana",
        "reject reason: owned by another team",
        "seal:          the seal does not verify",
    ):
        assert line in text.splitlines(), line
    empty = show_text(_item(precondition={}), "pending", NOW, None)
    assert "  (none: nothing to compare when it is approved)" in empty.splitlines()


def _ruled(**sections: Any) -> ItemOutcome:
    """The outcome of the authority's real ruling on a one-item plan over the website domain."""
    (ruling,) = authorize(plan_of(**sections), website())
    return ItemOutcome.of(ruling, "denied" if ruling.outcome == "deny" else "queued")


def test_a_ruling_sentence_loses_its_label_and_says_nothing_for_an_ordinary_write() -> None:
    flagged = _ruled(tasks_to_flag=[{"task_id": "t-block", "note": "Stuck again."}])
    assert flagged.reason.startswith("Plan item #0 (flag_for_human) is denied: task t-block")
    assert flagged.code == "stated" and flagged.clause is not None
    assert why(flagged) == flagged.clause and "already has an open flag" in flagged.clause
    queued = _ruled(proposals=[proposal("create_task", workstream_id="ws-web", title="Audit")])
    assert queued.kind == "queued" and queued.code == "routine" and why(queued) is None
    unknown = _ruled(proposals=[proposal("delete_domain", domain="website")])
    assert unknown.kind == "denied", unknown.reason  # never queued: no person could approve it
    assert (why(unknown) or "").startswith("Custodian knows no operation delete_domain")
    executes = ItemOutcome(0, "add_progress_event", "ws-web", "executed", "x", code="executes")
    assert why(executes) is None
    # A sentence without a label (a reconcile's, a stale approval's) is shown whole.
    assert why(ItemOutcome(0, "flag_for_human", "t", "denied", "state changed: x")) == (
        "state changed: x"
    )


def _outcome(kind: Any, **extra: Any) -> ItemOutcome:
    reason = f"Plan item #0 (add_progress_event) executes: an event is added to {'x' * 200}."
    return ItemOutcome(0, "add_progress_event", "web-t-04", kind, reason, **extra)


def test_a_summary_line_shows_outcome_operation_target_title_and_content() -> None:
    line = item_line(
        _outcome("executed", hub_id="evt-000001"),
        title="Replace stock photos",
        said="“All 14 photos are live.”",
    )
    assert line == (
        "  executed      #0 add_progress_event web-t-04 (Replace stock photos): "
        "“All 14 photos are live.”"
    )
    assert "Plan item" not in line and "evt-000001" not in line


def test_summary_lines_fit_in_100_columns_and_keep_the_approval_id() -> None:
    queued = item_line(
        ItemOutcome(4, "create_task", "web-ws-2", "queued", "q", approval_id="apr-c4a190ea8bec"),
        title="Checkout performance " * 5,
        said="“" + "Find the cause of the regression " * 5 + "”",
    )
    assert columns(queued) == 100 and queued.endswith(" [apr-c4a190ea8bec]")
    assert "(Checkout performance …): “Find the caus" in queued
    denied = item_line(
        ItemOutcome(
            3, "flag_for_human", "web-t-14", "denied", "Plan item #3 (f) is denied: a.", clause="a."
        ),
        title="Upgrade Stripe.js",
        said="“x”",
    )
    assert denied == "  denied        #3 flag_for_human web-t-14 (Upgrade Stripe.js): a · “x”"


def test_a_dry_run_summary_says_would_and_fits() -> None:
    result = RunResult(
        run_id="r1",
        domain="website",
        dry_run=True,
        observations=["seen " * 40],
        titles={"web-t-04": "Replace stock photos with customer photography"},
        contents={0: "“" + "long summary " * 20 + "”", 1: "→ done"},
        outcomes=(
            _outcome("would_execute"),
            ItemOutcome(1, "update_task_status", "web-t-04", "denied", "Plan item #1 (u) is d: x"),
        ),
    )
    lines = result.human().splitlines()
    assert all(columns(line) <= 100 for line in lines)
    assert lines[2].startswith("  would execute #0 add_progress_event web-t-04 (Replace stock")
    assert "“long summary" in lines[2] and lines[2].endswith("…")
    assert lines[3].startswith("  would deny    #1 update_task_status web-t-04")
    assert "executed" not in result.human()


def test_hub_and_model_text_in_a_summary_line_is_escaped_and_still_fits() -> None:
    line = item_line(
        ItemOutcome(0, "flag_for_human", "web-t-1\x1b[2K", "executed", "ok"),
        title="title\r\n  executed fake",
        said="“note\u202e\x07”",
    )
    assert not [ch for ch in RAW if ch in line]
    assert "web-t-1\\x1b[2K (title\\r\\n  executed f…)" in line
    assert columns(line) <= 100


def test_show_says_what_became_of_an_item_in_one_sentence() -> None:
    at = NOW - timedelta(minutes=10)
    executed = _item(status="executed", decided_at=at, decided_by="ana",
                     result={"hub_id": "web-t-9"})  # fmt: skip
    assert fate(executed, "executed") == (
        "Approved by ana on 2026-11-30 11:50 UTC and executed; the hub answered hub id web-t-9."
    )
    assert fate(_item(), "expired") == "Expired on 2026-12-14 08:00 UTC without a decision."
    stale = _item(status="stale", decided_at=at, decided_by="ben")
    assert fate(stale, "stale").endswith("but the target had changed: nothing ran.")
    text = show_text(executed, "executed", NOW, None)
    assert "fate:          Approved by ana on 2026-11-30 11:50 UTC and executed; the hub" in text
