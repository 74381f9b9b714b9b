"""A closed write that lands later anyway is `found` by a later run and flagged for a person, once.

Against the real reference hub and real `custodian run` processes: a killed run's write is closed
by the next run's reconcile without being sent again; then the hub takes that very write, with its
key (as a proxy that held it would deliver it). The run after proves it landed by the hub
replaying its key to a probe, journals it as found late, says so in its note and in `--json`,
and the runs after that do not report it again. A person who sets the same status by hand is not
taken for the write: the hub refuses the probe (412, no replay), and the note says so, once.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import compact
from custodian_runtime.core.fold.late_landings import LATE_WINDOW, closed_writes
from custodian_runtime.core.journal.kinds import Receipt, read_as
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.journal.store import JournalStore
from support.runs import hub_get
from support.spine import (
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
DONE = {"task_id": "web-t-3", "status": "done"}


KEY = "custodian-killed-run-0"


def _forge_killed_write(memory: Path, version: int) -> None:
    """A killed run's write, authorized with no ruling and dispatched at task version `version`:
    the next reconcile closes it without sending it again."""
    store = JournalStore(memory)
    store.read("website")
    writer = store.writer("website", "killed-run", lambda: datetime.now(UTC))
    planned = {"status": "todo", "updated_at": "2026-01-01T00:00:00+00:00", "version": version}
    writer.append(
        "authorized",
        {
            "index": 0,
            "operation": "update_task_status",
            "params": DONE,
            "fingerprint": fingerprint("update_task_status", DONE),
            "idempotency_key": KEY,
            "by": "policy",
            "planned_on": planned,
        },
    )
    writer.append("dispatched", {"index": 0, "idempotency_key": KEY})


def _closed(tmp_path: Path, hub_url: str, llm: str) -> int:
    """The forged write closed by a run's reconcile; the task's version it carried."""
    memory = tmp_path / "memory"
    _run_process(tmp_path, hub_url, llm)
    version = int(httpx.get(f"{hub_url}/tasks/web-t-3", timeout=5).json()["version"])
    _forge_killed_write(memory, version)
    closing = _run_process(tmp_path, hub_url, llm)
    [closed] = closing["reconciled"]  # type: ignore[misc]
    assert closed["outcome"] == "refused" and closing["late_landings"] == []
    return version


def _run_process(tmp_path: Path, hub_url: str, llm: str) -> dict[str, object]:
    memory = tmp_path / "memory"
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory, "--force")))
    assert code == 0, err
    summary: dict[str, object] = json.loads(out)
    return summary


def test_a_closed_write_that_lands_later_is_found_once_and_flagged(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        version = _closed(tmp_path, hub.url, llm)
        assert hub_get(hub, "/tasks/web-t-3")["status"] == "todo"

        # The held write lands after all: the hub takes it, with its own key and If-Match.
        held = {"Idempotency-Key": KEY, "If-Match": f'"{version}"'}
        moved = httpx.patch(
            f"{hub.url}/tasks/web-t-3", json={"status": "done"}, headers=held, timeout=5
        )
        moved.raise_for_status()

        finding = _run_process(tmp_path, hub.url, llm)
        [late] = finding["late_landings"]  # type: ignore[misc]
        assert late["run"] == "killed-run" and late["hub_id"] == "web-t-3"
        assert late["closed"] == "refused" and late["outcome"] == "found_late"
        assert "the hub replayed its key" in late["reason"] and finding["same_value"] == []
        note = Path(str(finding["note"])).read_text(encoding="utf-8")
        assert "landed anyway" in note and "killed-run" in note and "`web-t-3`" in note
        records = journal(memory)
        [probe] = of_run(records, str(finding["run_id"]), "landing_probe")
        assert (probe.data["idempotency_key"], probe.data["if_match"]) == (KEY, version)
        [found] = of_run(records, str(finding["run_id"]), "receipt")
        receipt = read_as(found, Receipt)
        assert (receipt.late, receipt.reconciles, receipt.found_on_hub, receipt.replayed) == (
            "refused",
            "killed-run",
            True,
            True,
        )
        assert core_journal.verify_chain(records) == []
        # The forged write breaks its own rules (no run_started, no ruling); the probe and the
        # late receipt none.
        [forged] = of_run(records, "killed-run", "authorized")
        assert {p.seq for p in core_journal.verify_spine(records)} == {forged.seq}
        inspected = custodian_cli(
            tmp_path, "inspect", str(finding["run_id"]), "--memory", str(memory)
        )
        assert "FOUND LATE" in inspected.stdout and "closed (refused) earlier" in inspected.stdout

        # Reported once: the runs after it have nothing late to say.
        for _ in range(2):
            assert _run_process(tmp_path, hub.url, llm)["late_landings"] == []
        assert len([r for r in journal(memory) if r.kind == "receipt"]) == 1
        assert len([r for r in journal(memory) if r.kind == "landing_probe"]) == 1


def test_a_person_setting_the_same_status_by_hand_is_not_taken_for_the_closed_write(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        version = _closed(tmp_path, hub.url, llm)
        # A person sets the very status by hand: the value matches, the version moved by one.
        by_hand = httpx.patch(f"{hub.url}/tasks/web-t-3", json={"status": "done"}, timeout=5)
        by_hand.raise_for_status()
        assert by_hand.json()["version"] == version + 1

        finding = _run_process(tmp_path, hub.url, llm)
        assert finding["late_landings"] == []
        [same] = finding["same_value"]  # type: ignore[misc]
        assert (same["run"], same["hub_id"], same["by_other"]) == ("killed-run", "web-t-3", True)
        assert "refused it at version" in same["reason"]
        note = Path(str(finding["note"])).read_text(encoding="utf-8")
        assert "set by someone else" in note and "killed-run" in note
        assert "landed anyway" not in note
        records = journal(memory)
        assert [r for r in records if r.kind == "receipt"] == []
        [probe] = of_run(records, str(finding["run_id"]), "landing_probe")
        assert probe.data["if_match"] == version
        # The probe applied nothing: the task is as the person left it.
        assert hub_get(hub, "/tasks/web-t-3")["version"] == version + 1
        [forged] = of_run(records, "killed-run", "authorized")
        assert {p.seq for p in core_journal.verify_spine(records)} == {forged.seq}

        # Said once: the runs after it neither probe nor report it again.
        after = _run_process(tmp_path, hub.url, llm)
        assert after["same_value"] == [] and after["late_landings"] == []
        assert len([r for r in journal(memory) if r.kind == "landing_probe"]) == 1
        assert len([r for r in journal(memory) if r.kind == "same_value"]) == 1


def test_the_checkpoint_keeps_a_closed_write_for_the_window_then_lets_it_go(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        _closed(tmp_path, hub.url, llm)
    records = list(journal(memory))
    [closed] = closed_writes(records)
    assert closed.how == "refused" and closed.write.run_id == "killed-run"
    # Folding the journal keeps what comparing it with the hub needs ...
    assert [c.write for c in closed_writes(compact(records))] == [closed.write]
    # ... until the window has passed since it was closed.
    later = core_journal.parse_at(records[-1].at) + LATE_WINDOW + timedelta(minutes=1)
    tail = core_journal.make_record(records[-1], "later-run", "website", "run_started", later, {})
    assert closed_writes(compact([*records, tail])) == []
