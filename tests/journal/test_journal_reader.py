"""The runs index: the review page reads a domain's runs from it and the tail, as a scan would."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.fold.run_index import (
    RunsFold,
    digests_of,
    fold_runs,
    summary_of,
    with_late,
)
from custodian_runtime.core.fold.runs import run_summaries
from custodian_runtime.core.journal.kinds import ModelResponse, NoteWritten, Observed, read_as
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.prices import cost_usd
from custodian_runtime.journal import _index
from custodian_runtime.journal.prune import prune_segments
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.journal.reseal import reseal
from custodian_runtime.journal.settle import settle
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review import pages
from custodian_runtime.review.runs import PAGE_SIZE, RunRow
from custodian_runtime.review.standing_history import grant_uses
from support.review import review_settings
from support.runs import tree_digest
from support.standing import Cli, status

DOMAIN = "website"
START = datetime(2026, 1, 1, tzinfo=UTC)
Step = tuple[str, dict[str, Any]]


class Clock:
    """A clock that moves a minute a read."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


# The scan the index is held to: every run's row built from the whole journal's records, run by
# run, independently of the index's fold.
def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _last(run: Sequence[Record], kind: str) -> Record | None:
    return next((r for r in reversed(run) if r.kind == kind), None)


def _usage(run: Sequence[Record]) -> dict[str, Any]:
    answer = _last(run, "model_response")
    usage = read_as(answer, ModelResponse).usage if answer is not None else None
    return usage or {}


def _model_name(run: Sequence[Record]) -> str | None:
    """The model the adapter named in its answer, as the price table knows it."""
    answer = _last(run, "model_response")
    return read_as(answer, ModelResponse).model if answer is not None else None


def _open_flags(run: Sequence[Record], domain: str) -> int | None:
    """Open flags as the run observed them: the overview's count for the run's domain."""
    for record in run:
        overview = read_as(record, Observed).overview if record.kind == "observed" else None
        domains = overview.get("domains") if isinstance(overview, dict) else None
        for entry in domains if isinstance(domains, list) else ():
            if isinstance(entry, dict) and entry.get("domain") == domain:
                return _int(entry.get("open_flags"))
    return None


def run_rows(records: Sequence[Record]) -> list[RunRow]:
    """Every run of one domain journal, oldest first."""
    rows = []
    for summary in run_summaries(records):
        run = [r for r in records if r.run_id == summary.run_id]
        usage = _usage(run)
        note = _last(run, "note_written")
        rows.append(
            RunRow(
                run_id=summary.run_id,
                domain=summary.domain,
                started_at=summary.started_at,
                status=summary.status,
                approval=summary.approval,
                counts=summary.counts,
                model=summary.model,
                tokens_in=_int(usage.get("input_tokens")),
                tokens_out=_int(usage.get("output_tokens")),
                cost_usd=cost_usd(_model_name(run), usage) if usage else None,
                note=str(read_as(note, NoteWritten).path) if note is not None else None,
                open_flags=_open_flags(run, summary.domain),
                asked=any(r.kind in ("model_response", "model_failed") for r in run),
            )
        )
    return rows


def write_run(
    store: JournalStore, run_id: str, steps: Sequence[Step], clock: Clock, *, commit: bool = True
) -> None:
    """One run's records, committed as a run commits them (or left as a killed run leaves them)."""
    opened = store.open(DOMAIN)
    writer = store.writer(DOMAIN, run_id, clock, opened)
    for kind, data in steps:
        if kind == "close_interrupted":
            writer.close_interrupted(store.open(DOMAIN, repair=False).history)
        else:
            writer.append(kind, data)
    if commit:
        store.commit(writer)


def scheduled(n: int, *, note: bool = True) -> list[Step]:
    """A finished run that observed, asked a model and wrote a note."""
    overview = {"domains": [{"domain": DOMAIN, "open_flags": n % 4}]}
    usage = {"input_tokens": 100 + n, "output_tokens": n}
    steps: list[Step] = [
        ("run_started", {"model_spec": "offline"}),
        ("observed", {"state_digest": f"s{n}", "overview": overview}),
        ("model_response", {"provider": "offline", "model": "rules", "usage": usage}),
        ("ruling", {"index": 0, "outcome": "deny", "operation": "create_task"}),
    ]
    if note:
        steps.append(("note_written", {"path": f"2026{n:04d}T000000Z-website.md"}))
    counts = {"executed": 0, "queued": 0, "denied": 1, "failed": 0}
    return [*steps, ("finished", {"status": "completed", "exit_code": 0, "counts": counts})]


def granted(index: int, *closing: Step) -> list[Step]:
    """A write authorized under a grant, and what followed it in the same run."""
    params = {"workstream_id": "web-ws-1", "title": f"task {index}"}
    authorized = {"index": index, "operation": "create_task", "params": params, "by": "grant:g-1"}
    return [
        ("run_started", {"model_spec": "offline"}),
        ("authorized", {**authorized, "idempotency_key": f"k{index}"}),
        ("dispatched", {"index": index, "idempotency_key": f"k{index}"}),
        *closing,
        ("finished", {"status": "completed", "exit_code": 0, "counts": {"executed": 1}}),
    ]


def history(memory: Path, fillers: int = 150) -> JournalStore:
    """Runs of every shape: grants used and settled later, a person's run, a killed run closed."""
    store, clock = JournalStore(memory, fsync=lambda fd: None), Clock()
    write_run(store, "r-grant", granted(1, ("receipt", {"index": 1, "status_code": 201})), clock)
    write_run(store, "r-open", granted(2, ("unknown", {"index": 2})), clock)
    decided = {"approval_id": "ap-1", "decision": "approved", "by": "ana", "reason": "ok"}
    write_run(store, "a-1", [("approval_decided", decided)], clock)
    for n in range(fillers):
        write_run(store, f"r-{n:04d}", scheduled(n, note=n % 3 != 0), clock)
    killed = [("run_started", {"model_spec": "offline"}), ("model_failed", {"error": "x"})]
    write_run(store, "r-killed", killed, clock, commit=False)
    found = {"index": 2, "reconciles": "r-open", "found_on_hub": True}
    closing = [("run_started", {}), ("close_interrupted", {}), ("receipt", found)]
    write_run(store, "r-after", [*closing, ("finished", {"status": "completed"})], clock)
    return store


def scanned(memory: Path) -> tuple[Record, ...]:
    return JournalStore(memory).scan(DOMAIN).records


def assert_pages_as_a_scan_reads(memory: Path, tmp_path: Path) -> None:
    """Every page, the grant uses and the notes read as the whole journal says them."""
    settings = review_settings(memory, "embedded", tmp_path)
    records = scanned(memory)
    every = list(reversed(run_rows(records)))
    newest = [r for r in every if not r.approval]  # a person's decisions are listed apart
    decisions = [r for r in every if r.approval]
    last = max(1, -(-len(newest) // PAGE_SIZE))
    for page in range(1, last + 1):
        (shown,) = pages.domain_runs(settings, page)
        assert list(shown.runs) == newest[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        assert shown.pages == last
        assert list(shown.decisions) == (decisions[: pages.MAX_DECISIONS] if page == 1 else [])
        ids = {r.run_id for r in shown.runs}
        expected = [u for u in grant_uses(records) if u.run_id in ids]
        assert [u for uses in shown.granted.values() for u in uses] == expected
    assert pages.granted(settings) == sorted(grant_uses(records), key=lambda u: u.at, reverse=True)
    notes = {r.run_id: r.note for r in run_rows(records) if r.note}
    assert pages.run_notes(settings) == notes


def test_the_runs_page_reads_the_index_as_a_scan_reads_the_journal(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    history(memory)
    state = json.loads(_index.state_path(JournalStore(memory).layout(DOMAIN)).read_text())
    assert state["fold"]["head"]["seq"] == scanned(memory)[-1].seq  # kept by every commit
    assert_pages_as_a_scan_reads(memory, tmp_path)
    rows = {r.run_id: r for r in run_rows(scanned(memory))}
    assert rows["r-killed"].status == "interrupted"  # closed by the run after it
    uses = {u.run_id: u.outcome for u in grant_uses(scanned(memory))}
    assert uses == {"r-grant": "executed", "r-open": "executed"}  # settled by a later run


def test_a_killed_runs_records_after_the_index_are_folded_from_the_tail(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=3)
    write_run(store, "r-dying", scheduled(99)[:3], Clock(START + timedelta(days=1)), commit=False)
    state = _index.state_path(store.layout(DOMAIN)).read_bytes()
    (shown,) = pages.domain_runs(review_settings(memory, "embedded", tmp_path))
    assert shown.runs[0].run_id == "r-dying" and shown.runs[0].status == "no finished record"
    assert shown.runs[0].tokens_in == 199
    assert_pages_as_a_scan_reads(memory, tmp_path)
    assert _index.state_path(store.layout(DOMAIN)).read_bytes() == state  # readers never write


def test_a_torn_tail_is_reported_and_left_for_the_next_run(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=70)
    active = store.path(DOMAIN)
    with active.open("ab") as handle:
        handle.write(b'{"v":1,"seq":')
    size = active.stat().st_size
    (shown,) = pages.domain_runs(review_settings(memory, "embedded", tmp_path))
    assert len(shown.problems) == 1 and "torn tail" in shown.problems[0]
    assert active.stat().st_size == size  # read-only: nothing set aside
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_a_missing_or_older_index_is_rebuilt_from_the_journal(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=80)
    layout = store.layout(DOMAIN)
    _index.state_path(layout).unlink()
    _index.rows_path(layout).unlink()
    before = tree_digest(memory)
    assert_pages_as_a_scan_reads(memory, tmp_path)  # read whole, in memory
    assert tree_digest(memory) == before  # a page read writes nothing
    write_run(store, "r-later", scheduled(7), Clock(START + timedelta(days=2)))
    assert _index.state_path(layout).exists()  # the next commit rebuilt it, as a checkpoint
    assert_pages_as_a_scan_reads(memory, tmp_path)
    saved = json.loads(_index.state_path(layout).read_text())
    saved["fold"]["v"] = 0  # as an older release would have written it
    _index.state_path(layout).write_text(json.dumps(saved))
    assert_pages_as_a_scan_reads(memory, tmp_path)
    write_run(store, "r-last", scheduled(8), Clock(START + timedelta(days=3)))
    assert json.loads(_index.state_path(layout).read_text())["fold"]["v"] == RunsFold(domain="d").v
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_a_record_of_a_finished_run_after_its_row_is_folded_as_a_scan_groups_it(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=3)
    # A record of a run whose row is final, as a journal that breaks the spine holds one.
    write_run(store, "r-0001", [("note_written", {"path": "late.md"})], Clock(START))
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_a_damaged_journal_is_marked_once_and_read_whole(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store, clock = history(memory, fillers=3), Clock(START + timedelta(days=2))
    layout = store.layout(DOMAIN)
    data = bytearray(layout.active.read_bytes())
    data[data.index(b"\n") + 1] = ord("[")  # the second line no longer parses; same length
    layout.active.write_bytes(bytes(data))
    _index.state_path(layout).unlink()
    write_run(store, "r-next", scheduled(5), clock)  # runs go on: they read the checkpoint
    state = json.loads(_index.state_path(layout).read_text())
    assert "damaged" in state["unfoldable"]
    write_run(store, "r-later", scheduled(6), clock)
    assert json.loads(_index.state_path(layout).read_text()) == state  # no commit scans again
    assert_pages_as_a_scan_reads(memory, tmp_path)
    (shown,) = pages.domain_runs(review_settings(memory, "embedded", tmp_path))
    assert shown.problems and "line 2" in shown.problems[0]


def test_rows_of_another_index_are_never_trusted(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=80)
    rows = _index.rows_path(store.layout(DOMAIN))
    lines = rows.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "gen": "another"}, separators=(",", ":")) + "\n"
    rows.write_text("".join(lines))
    assert_pages_as_a_scan_reads(memory, tmp_path)  # a stale row read: the journal is read whole


def test_an_old_journal_without_an_index_reads_the_same(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = history(memory, fillers=20)
    layout = store.layout(DOMAIN)
    for path in (_index.state_path(layout), _index.rows_path(layout)):
        path.unlink()
    checkpoint = layout.checkpoint.read_bytes()
    assert_pages_as_a_scan_reads(memory, tmp_path)
    assert store.open(DOMAIN).rebuilt is None  # the checkpoint as it was: still opens
    assert layout.checkpoint.read_bytes() == checkpoint
    write_run(store, "r-next", scheduled(5), Clock(START + timedelta(days=2)))
    assert _index.state_path(layout).exists()  # its next run saves the index
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_a_pruned_journal_rebuilds_its_index_from_the_segments_left(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = JournalStore(memory, fsync=lambda fd: None, segment_bytes=4096)
    clock = Clock()
    for n in range(60):
        write_run(store, f"r-{n:04d}", scheduled(n), clock)
    clock.now += timedelta(days=60)
    for n in range(60, 70):
        write_run(store, f"r-{n:04d}", scheduled(n), clock)
    before = len(run_rows(scanned(memory)))
    layout = store.layout(DOMAIN)
    kept = {p: p.read_bytes() for p in (_index.state_path(layout), _index.rows_path(layout))}
    done = prune_segments(memory, DOMAIN, timedelta(days=31), clock.now)
    assert done.segments > 0 and done.anchor is not None
    assert len(run_rows(scanned(memory))) < before
    state = json.loads(_index.state_path(store.layout(DOMAIN)).read_text())
    assert state["fold"]["start"] == done.anchor.seq  # rebuilt by the prune itself
    assert_pages_as_a_scan_reads(memory, tmp_path)
    for path, data in kept.items():  # an index from before the prune: its start is not the anchor
        path.write_bytes(data)
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_a_write_settled_by_hand_shows_in_its_run_and_its_own(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store, clock = JournalStore(memory, fsync=lambda fd: None), Clock()
    write_run(store, "r-open", granted(2, ("unknown", {"index": 2})), clock)
    write_run(store, "r-next", scheduled(1), clock)
    seq = next(r.seq for r in scanned(memory) if r.kind == "authorized")
    settle(memory, f"{DOMAIN}:{seq}", "ana", "done by hand", clock, "n1")
    assert_pages_as_a_scan_reads(memory, tmp_path)
    (shown,) = pages.domain_runs(review_settings(memory, "embedded", tmp_path))
    assert shown.decisions[0].status == "settled by hand by ana"  # a person's, listed apart
    assert [u.outcome for u in shown.granted["r-open"]] == ["closed by hand"]


def test_a_reseal_leaves_the_index_right(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    old, new = "old-" + "a" * 28 + "-index-test", "new-" + "b" * 28 + "-index-test"
    store, clock = JournalStore(memory, fsync=lambda fd: None, seal_key=SealKey(old)), Clock()
    for n in range(70):
        write_run(store, f"r-{n:04d}", scheduled(n), clock)
    state = _index.state_path(store.layout(DOMAIN)).read_bytes()
    reseal(memory, SealKey(new, previous=old), DOMAIN, Clock())
    assert JournalStore(memory, seal_key=SealKey(new)).open(DOMAIN).head is not None
    assert _index.state_path(store.layout(DOMAIN)).read_bytes() == state
    assert_pages_as_a_scan_reads(memory, tmp_path)


def test_folding_in_chunks_equals_the_rows_of_the_whole_journal(tmp_path: Path) -> None:
    records = scanned(history(tmp_path / "memory", fillers=10).memory_dir)
    for size in (1, 7, len(records)):
        state, rows = RunsFold(domain=DOMAIN), []
        for at in range(0, len(records), size):
            folded = fold_runs(state, records[at : at + size])
            assert folded is not None
            state, done = folded
            rows.extend(done)
        late = {(u.run_id, u.index): u for u in state.late}
        whole = [*rows, *state.loose]
        assert [r.run_id for r in whole] == [d.run_id for d in digests_of(records)]
        assert [summary_of(r) for r in whole] == run_summaries(records)
        uses = [u for r in whole for u in with_late(r, late).uses]
        assert uses == [u for d in digests_of(records) for u in d.uses]


@pytest.mark.parametrize("page", [1, 3])
def test_one_runs_records_are_read_from_where_it_began(tmp_path: Path, page: int) -> None:
    memory = tmp_path / "memory"
    history(memory, fillers=100)
    reader = JournalReader(memory)
    shown = reader.runs(DOMAIN, page, 10).rows[4]
    expected = [r for r in scanned(memory) if r.run_id == shown.run_id]
    assert reader.run_records(DOMAIN, shown.run_id) == expected
    assert reader.find_run(shown.run_id) == DOMAIN
    killed = [r for r in scanned(memory) if r.run_id == "r-killed"]
    assert reader.run_records(DOMAIN, "r-killed") == killed  # its finished record came later


def test_real_runs_under_a_grant_read_as_a_scan_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    cli = Cli(tmp_path, monkeypatch)
    grant = cli.issue(small_hub.url, "--max", "1", "--expires", "7d")
    first = cli.run(small_hub.url, status("web-t-4"))
    assert first["items"][0]["grant"] == grant
    cli.run(small_hub.url, status("web-t-2"))  # past --max: queued
    cli.set_mode("create_task", "ask")
    assert_pages_as_a_scan_reads(cli.memory, tmp_path)
    (shown,) = pages.domain_runs(review_settings(cli.memory, "embedded", tmp_path))
    assert [u.text for u in shown.granted[first["run_id"]]] == [f"executed (grant {grant})"]
