"""A closed write that lands later anyway is `found` by a later run and flagged for a person, once.

Against the real reference hub and real `custodian run` processes: a killed run's write is closed
by the next run's reconcile without being sent; then the hub takes that very change (as a proxy
that held the write would deliver it). The run after journals it as found late, says so in its
note and in `--json`, and the runs after that do not report it again.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from custodian_runtime.core.journal import api as core_journal
from custodian_runtime.core.journal.fold import compact
from custodian_runtime.core.journal.kinds import Receipt, read_as
from custodian_runtime.core.journal.late_landings import LATE_WINDOW, closed_writes
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.memory.journal_store import JournalStore
from runsupport import hub_get
from spinesupport import (
    custodian_cli,
    finish,
    held_hub,
    journal,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

QUIET = {"observations": ["Nothing needs doing."]}
BLOCK = {"task_id": "web-t-3", "status": "blocked"}


def _forge_killed_write(memory: Path) -> None:
    """A killed run's write, authorized with no ruling: the next reconcile closes it unsent."""
    store = JournalStore(memory)
    store.read("website")
    writer = store.writer("website", "killed-run", lambda: datetime.now(UTC))
    writer.append(
        "authorized",
        {
            "index": 0,
            "operation": "set_task_status",
            "params": BLOCK,
            "fingerprint": fingerprint("set_task_status", BLOCK),
            "idempotency_key": "custodian-killed-run-0",
            "by": "policy",
        },
    )


def _run(tmp_path: Path, hub_url: str, llm: str) -> dict[str, object]:
    memory = tmp_path / "memory"
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory, "--force")))
    assert code == 0, err
    summary: dict[str, object] = json.loads(out)
    return summary


def test_a_closed_write_that_lands_later_is_found_once_and_flagged(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        _run(tmp_path, hub.url, llm)
        _forge_killed_write(memory)

        closing = _run(tmp_path, hub.url, llm)
        [closed] = closing["reconciled"]  # type: ignore[misc]
        assert closed["outcome"] == "refused" and closing["late_landings"] == []
        assert hub_get(hub, "/tasks/web-t-3")["status"] == "todo"

        # The held write lands after all: the hub now shows exactly what it would have written.
        moved = httpx.patch(f"{hub.url}/tasks/web-t-3", json={"status": "blocked"}, timeout=5)
        moved.raise_for_status()

        finding = _run(tmp_path, hub.url, llm)
        [late] = finding["late_landings"]  # type: ignore[misc]
        assert late["run"] == "killed-run" and late["hub_id"] == "web-t-3"
        assert late["closed"] == "refused" and late["outcome"] == "found_late"
        note = Path(str(finding["note"])).read_text(encoding="utf-8")
        assert "landed anyway" in note and "killed-run" in note and "`web-t-3`" in note
        records = journal(memory)
        [found] = of_run(records, str(finding["run_id"]), "receipt")
        receipt = read_as(found, Receipt)
        assert (receipt.late, receipt.reconciles, receipt.found_on_hub) == (
            "refused",
            "killed-run",
            True,
        )
        assert core_journal.verify_chain(records) == []
        # The forged write breaks its own rules (no run_started, no ruling); the late receipt none.
        [forged] = of_run(records, "killed-run", "authorized")
        assert {p.seq for p in core_journal.verify_spine(records)} == {forged.seq}
        inspected = custodian_cli(
            tmp_path, "inspect", str(finding["run_id"]), "--memory", str(memory)
        )
        assert "FOUND LATE" in inspected.stdout and "closed (refused) earlier" in inspected.stdout

        # Reported once: the runs after it have nothing late to say.
        for _ in range(2):
            assert _run(tmp_path, hub.url, llm)["late_landings"] == []
        assert len([r for r in journal(memory) if r.kind == "receipt"]) == 1


def test_the_checkpoint_keeps_a_closed_write_for_the_window_then_lets_it_go(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        _run(tmp_path, hub.url, llm)
        _forge_killed_write(memory)
        _run(tmp_path, hub.url, llm)
    records = list(journal(memory))
    [closed] = closed_writes(records)
    assert closed.how == "refused" and closed.write.run_id == "killed-run"
    # Folding the journal keeps what comparing it with the hub needs ...
    assert [c.write for c in closed_writes(compact(records))] == [closed.write]
    # ... until the window has passed since it was closed.
    later = core_journal.parse_at(records[-1].at) + LATE_WINDOW + timedelta(minutes=1)
    tail = core_journal.make_record(records[-1], "later-run", "website", "run_started", later, {})
    assert closed_writes(compact([*records, tail])) == []
