"""Two runs of one domain at once: the second exits 75 before it calls the model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.spine import (
    HOLD_TIMEOUT_S,
    THREE_WRITES,
    WriteHold,
    custodian_events,
    finish,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)


def test_a_second_run_of_a_locked_domain_exits_75_without_a_model_call(tmp_path: Path) -> None:
    hold = WriteHold(nth=1, phase="before_commit")
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    calls = tmp_path / "calls.txt"
    script = tmp_path / "model.py"
    script.write_text(
        f"import sys\nopen({str(calls)!r}, 'a').write('called\\n')\n"
        f"sys.stdout.write(open({str(tmp_path / 'answer.md')!r}).read())\n",
        encoding="utf-8",
    )
    with held_hub(tmp_path, hold) as hub:
        first = start_run(tmp_path, run_argv(hub.url, llm, memory))
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the first run never reached its first write"
        second = start_run(
            tmp_path, run_argv(hub.url, f"cmd:{sys.executable} {script}", memory, "--force")
        )
        code, out, err = finish(second)
        assert code == 75, err
        assert "locked by pid" in err and str(first.pid) in err
        assert not calls.exists()
        hold.release()
        code, out, err = finish(first)
        assert code == 0, err
        assert len(custodian_events(hub)) == 1
    # Only the first run is in the journal: the refused one wrote nothing there.
    assert {r.run_id for r in journal(memory)} == {json.loads(out)["run_id"]}
