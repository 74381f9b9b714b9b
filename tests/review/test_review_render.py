"""What the review page prints is inert: notes, params and charts from untrusted text."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_hub import ReferenceHub
from custodian_runtime.core.fold.run_index import digests_of
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review.chart import LEFT, RIGHT, build_chart
from custodian_runtime.review.markdown import render_markdown, split_front_matter
from custodian_runtime.review.pages import DomainRuns
from custodian_runtime.review.pending import changes, duration
from custodian_runtime.review.runs import (
    PAGE_SIZE,
    RunRow,
    day_totals,
    page_count,
    page_of,
    row_of,
)
from custodian_runtime.review.views import Views, environment
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.review import review_settings
from support.runs import CANON


def run_rows(records: Sequence[Record]) -> list[RunRow]:
    """Every run's row of the page, from the whole journal (the runs index's fold, read whole)."""
    return [row_of(d) for d in digests_of(records)]


def test_a_note_renders_without_raw_html_live_links_or_remote_images() -> None:
    html = render_markdown(
        "# Title\n\n<img src=x onerror=alert(1)> [go](javascript:alert(1)) "
        "[site](https://evil.invalid/) ![px](https://evil.invalid/p.png) <https://auto.invalid>"
    )
    assert "<h1>Title</h1>" in html
    assert "<img" not in html and "<a " not in html and "href=" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<span class="inert-link">site <code class="href">&lt;https://evil.invalid/&gt;' in html
    assert "[image: px]" in html


def test_front_matter_is_split_from_the_body() -> None:
    front, body = split_front_matter("---\nrun_id: r1\n---\n# Note\n")
    assert front == "run_id: r1\n" and body == "# Note\n"
    assert split_front_matter("# Note\n") == ("", "# Note\n")


def test_templates_escape_html_and_show_controls_as_escapes() -> None:
    template = environment().from_string("<p>{{ text }}</p>")
    html = template.render(text="<b>x</b>\u202etxt.exe\x1b[2J")
    assert html == "<p>&lt;b&gt;x&lt;/b&gt;\\u202etxt.exe\\x1b[2J</p>"


def test_changes_list_every_leaf_that_moved() -> None:
    before = {"task": {"id": "t-1", "status": "blocked", "updated_at": "a"}}
    after = {"task": {"id": "t-1", "status": "done", "updated_at": "b"}}
    assert changes(before, after) == (
        'task.status: "blocked" -> "done"',
        'task.updated_at: "a" -> "b"',
    )
    assert changes(before, {}) == (
        'task.id: "t-1" -> (absent)',
        'task.status: "blocked" -> (absent)',
        'task.updated_at: "a" -> (absent)',
    )
    assert duration(timedelta(days=2, hours=3, minutes=5)) == "2d 3h"
    assert duration(timedelta(minutes=-5)) == "0m"


def _row(run_id: str, executed: int, queued: int, denied: int, flags: int) -> RunRow:
    counts = {"executed": executed, "queued": queued, "denied": denied}
    return RunRow(
        run_id, "website", run_id, "completed", False, counts, None, 1, 2, None, None, flags
    )


def test_the_chart_stacks_each_runs_counts_and_draws_open_flags() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [_row("r1", 2, 1, 0, 1), _row("r2", 0, 0, 3, 4)]
    chart = build_chart(rows, [start, start + timedelta(hours=6)])
    assert [(b.series, round(b.height)) for b in chart.bars] == [
        ("executed", 70),
        ("queued", 35),
        ("denied", 105),
    ]
    assert chart.bars[0].x < chart.bars[2].x  # the later run is further right
    assert len(chart.flags_points.split()) == 2 and not chart.empty
    assert build_chart([], []).empty


def _record(seq: int, run: str, kind: str, data: dict[str, Any], at: str) -> Record:
    return Record(
        v=1, seq=seq, run_id=run, domain="website", kind=kind, at=at, data=data,
        prev="0" * 64, hash="0" * 64,
    )  # fmt: skip


def _journal(run: str, at: str, status: str, usage: dict[str, Any] | None) -> list[Record]:
    """One run's records as the runner writes them (hash chain left out: unread here)."""
    overview = {"domains": [{"domain": "platform", "open_flags": 9},
                            {"domain": "website", "open_flags": 3}]}  # fmt: skip
    records = [
        _record(1, run, "run_started", {"model_spec": "anthropic"}, at),
        _record(2, run, "observed", {"overview": overview, "snapshot": "x"}, at),
    ]
    if usage is not None:
        answer = {"provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage}
        records.append(_record(3, run, "model_response", answer, at))
    finished = {"status": status, "counts": {"executed": 1}, "exit_code": 0}
    return [*records, _record(4, run, "finished", finished, at)]


def test_the_open_flags_line_is_drawn_from_what_the_journal_holds() -> None:
    records = _journal("r1", "2026-01-01T08:00:00Z", "completed", None)
    records += _journal("r2", "2026-01-02T08:00:00Z", "completed", None)
    rows = run_rows(records)
    assert [r.open_flags for r in rows] == [3, 3]  # the run's domain, not another's
    start = datetime(2026, 1, 1, tzinfo=UTC)
    chart = build_chart(rows, [start, start + timedelta(days=1)])
    assert len(chart.flags_points.split()) == 2
    svg = environment().get_template("chart.svg.j2").render(chart=chart, domain="website")
    assert '<polyline class="flags"' in svg


def test_tokens_and_cost_come_from_the_adapters_usage_and_the_price_table() -> None:
    records = _journal("r1", "2026-01-01T08:00:00Z", "completed",
                       {"input_tokens": 1_000_000, "output_tokens": 100_000})  # fmt: skip
    records += _journal("r2", "2026-01-01T09:00:00Z", "completed", {"cost_usd": 0.5})
    records += _journal("r3", "2026-01-02T08:00:00Z", "skipped", None)
    records += _journal("r4", "2026-01-01T10:00:00Z", "completed", {})
    by_id = {r.run_id: r for r in run_rows(records)}
    assert by_id["r1"].tokens_text == "1000000 / 100000"
    assert by_id["r1"].cost_text == "$4.5000"  # 3.00 + 1.50 from core/prices.py
    assert by_id["r2"].tokens_text == "not reported"
    assert by_id["r2"].cost_text == "$0.5000"
    assert by_id["r3"].cost_text == "-"  # no model was asked: nothing is unknown
    assert by_id["r3"].tokens_text == "-"
    assert by_id["r4"].cost_text == "not reported"  # asked, but the adapter told no usage
    days = day_totals(list(by_id.values()))
    assert [(d.day, d.runs, d.tokens_in) for d in days] == [
        ("2026-01-02", 1, 0),
        ("2026-01-01", 3, 1_000_000),
    ]
    assert days[1].cost_text == "$5.0000 + not reported (1 run)"  # r4's cost is unknown
    assert days[0].cost_text == "$0.0000"
    assert days[1].tokens_text == "1000000 / 100000 + not reported (2 runs)"  # r2 and r4
    assert days[0].tokens_text == "0 / 0"  # r3 asked no model: nothing unknown
    only = day_totals([by_id["r4"]])[0]
    assert (only.tokens_text, only.cost_text) == ("not reported (1 run)",) * 2


def _page_row(n: int, status: str = "completed") -> RunRow:
    at = (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    counts = {"executed": 1}
    return RunRow(f"r{n:04}", "website", at, status, False, counts, "m", None, None, None, None, 1)


def _runs_page(rows: list[RunRow], page: int) -> str:
    newest = rows[::-1]
    shown = page_of(newest, page)
    chart = build_chart(shown[::-1], [parse_at(r.started_at) for r in shown[::-1]])
    domain = DomainRuns("website", tuple(shown), chart, (), tuple(day_totals(shown)),
                        page_count(newest))  # fmt: skip
    template = environment().get_template("runs.html.j2")
    return template.render(domains=[domain], page=page, last=domain.pages, css="/c.css")


def test_a_failed_run_is_coloured_apart_from_completed_ones() -> None:
    html = _runs_page([_page_row(1), _page_row(2, "failed"), _page_row(3, "partial")], 1)
    assert 'data-run-id="r0002"' in html
    assert '<span class="status bad">failed</span>' in html
    assert '<span class="status ok">completed</span>' in html
    assert '<span class="status warn">partial</span>' in html
    assert 'class="run tone-bad"' in html
    assert '<rect class="failure"' in html  # and marked on the chart
    assert "style=" not in html and "<script" not in html  # the CSP stays strict


def test_a_thousand_runs_are_paged_and_totalled_per_day() -> None:
    rows = [_page_row(n) for n in range(1000)]
    first = _runs_page(rows, 1)
    assert first.count("data-run-id=") == PAGE_SIZE
    assert 'data-run-id="r0999"' in first and 'data-run-id="r0949"' not in first
    assert "page 1 of 20" in first and 'href="/runs/page/2"' in first
    last = _runs_page(rows, 20)
    assert 'data-run-id="r0000"' in last and "newer runs" in last
    assert first.count('class="day"') == 3  # 50 hourly runs span three days
    assert "not reported" in first  # unknown tokens say so


def test_the_last_x_label_stays_inside_the_chart() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [_row("r1", 1, 0, 0, 0), _row("r2", 1, 0, 0, 0)]
    chart = build_chart(rows, [start, start + timedelta(hours=6)])
    (x0, _, a0), (x1, label, a1) = chart.x_labels
    assert (a0, a1) == ("start", "end") and label == "01-01 06:00"
    assert x1 <= chart.width - RIGHT and x0 >= LEFT


def test_the_runs_pages_are_served_and_a_page_number_is_checked(tmp_path: Path) -> None:
    settings = review_settings(tmp_path / "memory", "embedded", tmp_path)
    views = Views(settings)
    assert views.get("/runs/page/2", "csrf").status == 200
    assert b"No journal yet" in views.get("/runs", "csrf").body
    assert views.get("/runs/page/0", "csrf").status == 404


def test_real_runs_give_the_open_flags_line_and_their_cost(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    flags = {"domain": "website", "hub": small_hub.url, "llm": "offline", "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    for _ in range(2):
        run(load_settings(flags, {}, tmp_path), stderr=io.StringIO())
    rows = run_rows(JournalStore(tmp_path / "memory").scan("website").records)
    assert [r.open_flags for r in rows] == [1, 3]  # fl-1, then the two the first run raised
    assert {(r.tokens_text, r.cost_text, r.tone) for r in rows} == {("0 / 0", "$0.0000", "ok")}
    html = Views(review_settings(tmp_path / "memory", "embedded", tmp_path)).get("/runs", "c").body
    assert b'<polyline class="flags"' in html


class _Waiting:
    """An item as a newer queue writes it: with its `waiting_because` (code and one line)."""

    def __init__(self, item: Any, why: Any) -> None:
        self._item, self.waiting_because = item, why

    def __getattr__(self, name: str) -> Any:
        return getattr(self._item, name)


def _card_html(item: Any) -> str:
    from custodian_runtime.review.pending import PendingView
    from custodian_runtime.review.queue_forms import Typed
    from custodian_runtime.review.run_groups import by_decision

    view = PendingView(item, (), "1m", "13d", "{}", None, (), None, sentence="Create task")
    values = {"typed": Typed(), "csrf": "c", "next": "/", "notes": {}, "at_card": "", "flashes": []}
    (group,) = by_decision([view], {})
    return environment().get_template("_group.html.j2").render(g=group, **values)


def test_a_card_says_why_it_waits_when_its_item_says_and_nothing_when_it_does_not() -> None:
    from custodian_runtime.core.approvals.items import new_item

    now = datetime(2026, 1, 1, tzinfo=UTC)
    item = new_item(
        approval_id="apr-1", domain="website", operation="create_task", params={"title": "x"},
        rationale=None, run_id="r1", fingerprint="f" * 64, precondition={}, now=now, ttl_days=14,
    )  # fmt: skip
    why = {"code": "no_evidence", "text": "it cites no <b>evidence</b>"}
    said = _card_html(_Waiting(item, why))
    assert (
        '<p class="why" data-why="no_evidence">Waits because: it cites no &lt;b&gt;evidence' in said
    )
    assert 'class="why"' not in _card_html(item)  # an item of an older queue: no line
    assert 'class="why"' not in _card_html(_Waiting(item, None))
