"""Finding 12: a write whose answer never came is `unknown`, settled later, or closed by hand.

A write cut off at its deadline is journaled `unknown` (never `failed`) and left open; the next
run settles it by observing the hub, exactly once. A write left open on a hub that no longer
exists is closed by a person with `custodian journal settle REF`, the id `inspect` lists.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from support.spine import (
    HOLD_TIMEOUT_S,
    WriteHold,
    custodian_cli,
    custodian_events,
    finish,
    held_hub,
    journal,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

EVENT = {
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "task_id": "web-t-4",
            "event_type": "observation",
            "rests_on": ["web-t-4"],
            "summary": "CDN config verified in ev-1.",
        }
    ]
}
QUIET = {"observations": ["Nothing to do."]}
# The whole call's budget: the held write outlives it, so no answer comes.
SHORT = {"STATE_HUB_MAX_TOTAL_S": "1", "STATE_HUB_MAX_ATTEMPTS": "1"}
# Then the hub finishes (after commit) or drops (before commit) the write nobody waits for.
LATER_S = 3.0


def _cut_off(tmp_path: Path, hub_url: str, hold: WriteHold, *, abort: bool) -> str:
    """A run whose one write is held past its deadline: exit 5, the write journaled unknown."""
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", EVENT)
    proc = start_run(tmp_path, run_argv(hub_url, llm, memory), **SHORT)
    assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached the held write"
    threading.Timer(LATER_S, lambda: hold.release(abort=abort)).start()
    code, out, err = finish(proc)
    assert code == 5, err
    summary = json.loads(out)
    [item] = summary["items"]
    assert item["outcome"] == "unknown" and "no answer came" in item["error"]
    run_id = str(summary["run_id"])
    records = journal(memory)
    assert [r.kind for r in of_run(records, run_id) if r.kind in ("failed", "unknown")] == [
        "unknown"
    ]
    assert of_run(records, run_id, "finished")[0].data["counts"]["unknown"] == 1
    return run_id


@pytest.mark.parametrize(
    ("phase", "settled"), [("after_commit", "found"), ("before_commit", "resent")]
)
def test_a_write_cut_off_at_its_deadline_is_unknown_and_the_next_run_settles_it_once(
    tmp_path: Path, phase: str, settled: str
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase=phase)
    with held_hub(tmp_path, hold) as hub:
        first = _cut_off(tmp_path, hub.url, hold, abort=phase == "before_commit")
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert "open writes (1)" in inspected.stdout and "UNKNOWN at" in inspected.stdout
        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        [report] = json.loads(out)["reconciled"]
        assert report["run"] == first and report["outcome"] == settled
        assert len(custodian_events(hub)) == 1  # exactly once either way
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspected.returncode == 0, inspected.stdout
        assert "open writes" not in inspected.stdout


def test_a_write_open_on_a_hub_that_is_gone_is_closed_by_hand(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    (tmp_path / "old").mkdir()
    with held_hub(tmp_path / "old", hold) as old:
        first = _cut_off(tmp_path, old.url, hold, abort=True)
    # That hub is gone. A run against another hub neither re-sends the write nor closes it.
    quiet = write_plan(tmp_path / "quiet.md", QUIET)
    (tmp_path / "new").mkdir()
    with held_hub(tmp_path / "new", None) as new:
        code, _, err = finish(start_run(tmp_path, run_argv(new.url, quiet, memory, "--force")))
        assert code == 2 and "custodian journal settle website:" in err, err
        listed = custodian_cli(tmp_path, "inspect", "--domain", "website", "--memory", str(memory))
        [authorized] = of_run(journal(memory), first, "authorized")
        ref = f"website:{authorized.seq}"
        assert f"  {ref}  add_progress_event  run {first} #0  dispatched" in listed.stdout

        wrong = custodian_cli(tmp_path, "journal", "settle", "website:1", "--by", "ana",
                              "--reason", "x", "--memory", str(memory))  # fmt: skip
        assert wrong.returncode == 2 and f"open writes: {ref}" in wrong.stderr
        done = custodian_cli(tmp_path, "journal", "settle", ref, "--by", "ana", "--reason",
                             "the old hub was retired", "--memory", str(memory))  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"{ref}: add_progress_event of run {first} closed by hand" in done.stdout
        [closing] = [r for r in journal(memory) if r.kind == "settled_by_hand"]
        assert closing.data["by"] == "ana" and closing.data["outcome"] == "closed by hand"
        assert closing.data["idempotency_key"] == authorized.data["idempotency_key"]

        # Settled: the next run goes on, and the record replays clean.
        code, out, err = finish(start_run(tmp_path, run_argv(new.url, quiet, memory, "--force")))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        assert custodian_events(new) == []
        inspected = custodian_cli(tmp_path, "inspect", first, "--memory", str(memory))
        assert inspected.returncode == 0, inspected.stdout
        assert (
            "CLOSED BY HAND" in inspected.stdout and "the old hub was retired" in inspected.stdout
        )
        again = custodian_cli(tmp_path, "journal", "settle", ref, "--by", "ana", "--reason", "x",
                              "--memory", str(memory))  # fmt: skip
        assert again.returncode == 2 and "not an open write" in again.stderr
