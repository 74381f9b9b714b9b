"""A run's cost does not grow with the number of other domains: 1,000 on a real reference hub.

The prompt shows the run's own domain and a bounded digest of the others, the `observed` record
keeps the same, and a run reads `/state/summary` once at most (none when it is handed one).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_revision_skip import Counting

from custodian_hub import ReferenceHub
from custodian_runtime.core.context.overview import OTHERS_SHOWN, bounded
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.run import run
from custodian_runtime.run._result import RunResult
from custodian_runtime.settings import load_settings
from support.fleet import seed_fleet
from support.runs import CANON
from support.spine import journal, of_run

PROMPT_TOKENS = 6_000  # the whole prompt of a small domain, whatever the hub holds
OBSERVED_BYTES = 8_000  # the `observed` record of a small domain


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> object:
    """A reference hub with 1,000 small domains."""
    db = tmp_path_factory.mktemp("fleet") / "hub.sqlite3"
    seed_fleet(db, 1_000)
    with ReferenceHub(db) as hub:
        yield hub


def _run_counted(
    tmp_path: Path, hub: ReferenceHub, counting: Counting, **kwargs: object
) -> RunResult:
    flags = {"domain": "d0001", "hub": hub.url, "llm": "offline", "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    settings = load_settings(flags, {"PATH": "/usr/bin:/bin"}, tmp_path)
    with (tmp_path / "stderr").open("a") as err:
        return run(settings, transport=counting, stderr=err, **kwargs)  # type: ignore[arg-type]


def test_a_run_among_1000_domains_succeeds_with_one_summary_read_and_bounded_records(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    counting = Counting()
    result = _run_counted(tmp_path, fleet, counting)
    assert result.exit_code == 0, (result.message, (tmp_path / "stderr").read_text()[-2000:])
    assert counting.paths().count("/state/summary") == 1  # the first run's check, reused
    records = of_run(journal(tmp_path / "memory", "d0001"), result.run_id)
    [prompt] = [r for r in records if r.kind == "prompt"]
    assert prompt.data["estimated_tokens"] < PROMPT_TOKENS
    observed = [r for r in records if r.kind == "observed" and not r.data.get("after_act")]
    size = len(json.dumps(observed[0].data))
    assert size < OBSERVED_BYTES
    overview = observed[0].data["overview"]
    assert overview["left_out"] == 1_000 - 1 - OTHERS_SHOWN
    assert "d0001" in [d["domain"] for d in overview["domains"]]
    assert len(overview["domains"]) == 1 + OTHERS_SHOWN


def test_a_run_handed_the_overview_reads_no_summary_of_all_domains(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    first = _run_counted(tmp_path, fleet, Counting())
    assert first.exit_code == 0
    overview = StateSummary.model_validate_json(
        Counting().handle_request(_get(fleet.url + "/state/summary")).read()
    )
    counting = Counting()
    again = _run_counted(tmp_path, fleet, counting, overview=overview)
    assert again.exit_code == 0, again.message
    assert "/state/summary" not in counting.paths()


def test_the_digest_names_the_domains_with_most_open_work_and_sums_the_rest(
    fleet: ReferenceHub,
) -> None:
    import httpx

    overview = StateSummary.model_validate(httpx.get(fleet.url + "/state/summary").json())
    shown = bounded(overview, "d0500", others=3)
    assert [d.domain for d in shown.domains][:4] == sorted(d.domain for d in shown.domains)
    assert "d0500" in {d.domain for d in shown.domains} and shown.left_out == 996
    assert shown.rest is not None and shown.rest.tasks.todo == 996


def _get(url: str) -> object:
    import httpx

    return httpx.Request("GET", url)


def test_the_prompt_shows_ten_other_domains_and_one_summed_row_for_the_rest() -> None:
    from custodian_runtime.core.context.prompt import build_view
    from custodian_runtime.core.contract import DomainOverview, TaskCounts, WorkstreamCounts
    from support.context import typical_inputs, typical_overview

    own = typical_overview().domains[0]
    others = tuple(
        DomainOverview(domain=f"d{i:03}", workstreams=WorkstreamCounts(active=1),
                       tasks=TaskCounts(todo=i), open_flags=0, open_decisions=0)
        for i in range(50)
    )  # fmt: skip
    overview = typical_overview().model_copy(update={"domains": (own, *others)})
    rows = build_view(typical_inputs(overview=overview)).overview
    assert len(rows) == 2 + 1 + OTHERS_SHOWN + 1  # header, own, the ten busiest, the rest
    assert rows[-1].startswith("| 40 more domains, summed | 40/0/0 | 780 |")  # todo 0+...+39
    shown = {r.split(" | ")[0].lstrip("| ") for r in rows[2:-1]}
    assert shown == {"website (this run)", *(f"d{i:03}" for i in range(40, 50))}


def _walked(overview: StateSummary, domain: str, others: int) -> tuple[object, ...]:
    """The bounded view by walking every domain, as it was made before the index."""
    import heapq

    from custodian_runtime.core.context.overview import open_work, summed

    rest = [d for d in overview.domains if d.domain != domain]
    top = heapq.nsmallest(others, rest, key=lambda d: (-open_work(d), d.domain))
    left = [d for d in rest if d.domain not in {t.domain for t in top}]
    own = [d for d in overview.domains if d.domain == domain][:1]
    chosen = tuple(sorted([*own, *top], key=lambda d: d.domain))
    return chosen, len(left), summed(left) if left else None


def test_the_index_gives_each_domain_what_a_walk_of_every_domain_gives() -> None:
    import random
    from datetime import UTC, datetime, timedelta

    from custodian_runtime.core.context.overview import index_of
    from custodian_runtime.core.contract import DomainOverview, TaskCounts, WorkstreamCounts

    pick = random.Random(40)
    start = datetime(2026, 12, 1, tzinfo=UTC)
    for size in (0, 1, 3, 11, 12, 13, 60):
        domains = tuple(
            DomainOverview(
                domain=f"x{i:03}",
                workstreams=WorkstreamCounts(active=pick.randint(0, 2)),
                tasks=TaskCounts(todo=pick.randint(0, 3), blocked=pick.randint(0, 1)),
                open_flags=pick.randint(0, 1),
                open_decisions=0,
                last_event_at=None
                if pick.random() < 0.3
                else start + timedelta(minutes=pick.randint(0, 50)),
            )
            for i in range(size)
        )
        overview = StateSummary(generated_at=start, domains=domains)
        for name in [*(d.domain for d in domains), "absent"]:
            for others in (OTHERS_SHOWN, 3):
                got = bounded(overview, name, others)
                assert (got.domains, got.left_out, got.rest) == _walked(overview, name, others)
        assert index_of(overview) is index_of(overview)  # made once, kept with the overview
        fresh = StateSummary(generated_at=start, domains=domains)
        assert overview == fresh and hash(overview) == hash(fresh)  # the index is no field
        assert overview.model_dump() == fresh.model_dump()
        copied = overview.model_copy(update={"domains": domains[:1]})
        assert index_of(copied).domains is copied.domains  # a copy with other domains: its own
