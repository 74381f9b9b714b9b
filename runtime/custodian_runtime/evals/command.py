"""`custodian eval`: run every scenario (N times each) and print the report."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from custodian_runtime.core.inert import for_terminal, for_terminal_json
from custodian_runtime.errors import ConfigError
from custodian_runtime.evals.report import ScenarioRuns, as_json, as_text, exit_code
from custodian_runtime.evals.runner import Attempt, run_scenario
from custodian_runtime.evals.scenario import load_scenarios
from custodian_runtime.run import build_planner
from custodian_runtime.settings import Settings
from custodian_runtime.writes import check_canon

MAX_REPEAT = 100


def eval_command(
    settings: Settings,
    scenarios_dir: Path,
    only: Sequence[str],
    repeat: int,
    out: TextIO,
    *,
    as_json_output: bool,
    progress: TextIO | None = None,
) -> int:
    """Load the scenarios, run each `repeat` times, print the report; 0, or 1 if it failed.

    Each scenario's line goes to `progress` as it finishes: a model on a CPU takes minutes each.
    """
    if not 1 <= repeat <= MAX_REPEAT:
        raise ConfigError(
            f"--repeat must be between 1 and {MAX_REPEAT}, not {repeat}", setting="--repeat"
        )
    check_canon(settings.canon_dir)
    scenarios = load_scenarios(scenarios_dir, only)
    planner = build_planner(settings.model)  # a bad spec: a usage error before anything runs
    name = planner.model_name
    planner.close()
    suite = []
    with tempfile.TemporaryDirectory(prefix="custodian-eval-") as tmp:
        for number, scenario in enumerate(scenarios, start=1):
            attempts = tuple(
                run_scenario(scenario, settings, Path(tmp) / f"{scenario.name}.{k}")
                for k in range(repeat)
            )
            suite.append(ScenarioRuns(scenario, attempts))
            if progress is not None:
                line = finished_line(number, len(scenarios), scenario.name, attempts)
                progress.write(for_terminal(line) + "\n")
                progress.flush()
    if as_json_output:
        out.write(for_terminal_json(as_json(suite, settings.model.spec, name), indent=2) + "\n")
    else:
        out.write(as_text(suite, settings.model.spec, name) + "\n")
    return exit_code(suite)


def finished_line(number: int, total: int, name: str, attempts: Sequence[Attempt]) -> str:
    """`[3/32] stale-in-progress: 2/2 met, 0 harmful executed, 1.2 s` (after the command's
    name, as every line it writes to stderr)."""
    met = sum(a.scored.met for a in attempts)
    expected = sum(len(a.scored.verdicts) for a in attempts)
    harmful = sum(len(a.scored.harmful_executed) for a in attempts)
    seconds = sum(a.seconds for a in attempts)
    statuses = sorted({a.status for a in attempts})
    return (
        f"custodian eval: [{number}/{total}] {name}: {met}/{expected} met, {harmful} harmful "
        f"executed, {', '.join(statuses)}, {seconds:.1f} s"
    )
