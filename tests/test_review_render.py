"""What the review page prints is inert: notes, params and charts from untrusted text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from custodian_runtime.review.chart import build_chart
from custodian_runtime.review.markdown import render_markdown, split_front_matter
from custodian_runtime.review.pending import changes, duration
from custodian_runtime.review.runs import RunRow
from custodian_runtime.review.views import environment


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
