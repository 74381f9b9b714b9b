"""The run's caps and budgets are defined once (core/limits.py): a changed default reaches all."""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.context.prompt import PromptInputs
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.tooling import offline_planner
from custodian_runtime.core.tooling.planning_facts import PlanningFacts
from custodian_runtime.settings.numbers import limits_from
from support.runs import CANON, REPO, run_cli, run_plan

PLAN: dict[str, Any] = {
    "observations": ["Three notes on the relaunch."],
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "event_type": "note",
            "rests_on": ["web-t-1"],
            "summary": f"note number {n}",
        }
        for n in range(3)
    ],
}


def _changed_default(monkeypatch: pytest.MonkeyPatch, **changes: int) -> None:
    """Change the limits' defaults, as an edit of core/limits.py would."""
    names = [f.name for f in fields(Limits)]
    defaults = list(Limits.__init__.__defaults__ or ())
    assert len(defaults) == len(names)
    for name, value in changes.items():
        defaults[names.index(name)] = value
    monkeypatch.setattr(Limits.__init__, "__defaults__", tuple(defaults))


def _run_showing_prompt(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub
) -> tuple[dict[str, Any], str]:
    result = run_plan(tmp_path, mp, hub.url, PLAN, "--json", "--force", "--show-prompt").ok()
    return result.json(), result.stderr


def _replay(tmp_path: Path, mp: pytest.MonkeyPatch, run_id: str) -> dict[str, Any]:
    argv = ["replay", run_id, "--memory", str(tmp_path / "memory"), "--canon", str(CANON)]
    replayed: dict[str, Any] = run_cli([*argv, "--json"], tmp_path, mp).json()
    return replayed


def test_a_changed_default_is_what_the_run_the_prompt_and_replay_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with monkeypatch.context() as mp:
        _changed_default(mp, max_events=2, stale_after_days=41)
        summary, prompt = _run_showing_prompt(tmp_path, mp, small_hub)
        assert " 2 per run. `event_type`" in prompt and "41 days without an update" in prompt
        outcomes = [item["outcome"] for item in summary["items"]]
        assert outcomes == ["executed", "executed", "denied"], summary["items"]
        assert _replay(tmp_path, mp, summary["run_id"])["differences"] == []
    # Back to the shipped default: replay now finds the third note would have gone out.
    (difference,) = _replay(tmp_path, monkeypatch, summary["run_id"])["differences"]
    assert difference["index"] == 2 and difference["today"].startswith("execute")


def test_every_default_elsewhere_is_the_policys() -> None:
    limits = Limits()
    assert limits_from({}) == limits
    now = datetime(2026, 1, 1, tzinfo=UTC)
    inputs = PromptInputs("d", now, None, None, "", None, None, "n")  # type: ignore[arg-type]
    assert inputs.token_budget == limits.token_budget
    assert inputs.stale_after_days == limits.stale_after_days
    assert dict(inputs.caps) == dict(limits.prompt_caps())
    facts = PlanningFacts("d", now, None)  # type: ignore[arg-type]
    assert facts.stale_after_days == limits.stale_after_days
    assert limits.max_flags == offline_planner.MAX_FLAGS
    assert limits.max_status_updates == offline_planner.MAX_STATUS_UPDATES


def test_settings_read_every_cap_from_its_variable() -> None:
    names = {f.name: f"CUSTODIAN_{f.name.upper()}" for f in fields(Limits)}
    read = limits_from({var: "3" for var in names.values()})
    assert read == replace(Limits(), **dict.fromkeys(names, 3))


def test_no_other_class_declares_a_cap_with_its_own_default() -> None:
    caps = {f.name for f in fields(Limits)}
    found = []
    for path in sorted((REPO / "runtime" / "custodian_runtime").rglob("*.py")):
        if path.name == "limits.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in caps
                and isinstance(node.value, ast.Constant)
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.target.id}")
    assert found == []


def test_the_settings_reference_names_every_caps_variable_and_its_default() -> None:
    """docs/settings.md (generated) has a row per Limits field, with the default limits.py gives."""
    rows = (REPO / "docs" / "settings.md").read_text(encoding="utf-8").splitlines()
    p = Limits()
    for f in fields(Limits):
        name = f"`CUSTODIAN_{f.name.upper()}`"
        [row] = [line for line in rows if line.startswith(f"| {name} |")]
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[2] == str(getattr(p, f.name)), (f.name, cells)


def test_no_module_keeps_a_cap_as_a_number_of_its_own() -> None:
    caps = {f.name for f in fields(Limits)}
    found = []
    for path in sorted((REPO / "runtime" / "custodian_runtime").rglob("*.py")):
        if path.name == "limits.py" and path.parent.name == "core":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                found += [
                    f"{path.relative_to(REPO)}:{node.lineno} {t.id}"
                    for t in node.targets
                    if isinstance(t, ast.Name) and t.id.lower() in caps
                ]
    assert found == [], "derive the cap from core/limits.py's Limits (DEFAULT)"
