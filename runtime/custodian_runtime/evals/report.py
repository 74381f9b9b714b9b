"""The eval report: a table per scenario, then totals; the same as JSON; and the exit code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.tooling.eval_expect import EvalItem
from custodian_runtime.evals.runner import Attempt
from custodian_runtime.evals.scenario import Scenario

_SHOWN = {"would_execute": "would execute", "would_queue": "would queue", "denied": "denied"}


@dataclass(frozen=True)
class ScenarioRuns:
    """A scenario and its attempts (one per `--repeat`)."""

    scenario: Scenario
    attempts: tuple[Attempt, ...]


def _sum(values: Sequence[int | float | None]) -> int | float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _item(i: EvalItem) -> dict[str, Any]:
    return {
        "index": i.index,
        "operation": i.operation,
        "target": i.task_id or i.params.get("workstream_id"),
        "outcome": i.outcome,
        "reason": i.reason,
    }


def _attempt_json(a: Attempt) -> dict[str, Any]:
    return {
        "status": a.status,
        "exit_code": a.exit_code,
        "message": a.message,
        "hub_unchanged": a.unchanged,
        "expectations": [v.__dict__ for v in a.scored.verdicts],
        "met": a.scored.met,
        "items": [{**_item(i), "params": i.params} for i in a.items],
        "harmful_proposed": [_item(i) for i in a.scored.harmful_proposed],
        "harmful_executed": [_item(i) for i in a.scored.harmful_executed],
        "input_tokens": a.input_tokens,
        "output_tokens": a.output_tokens,
        "cost_usd": a.cost_usd,
        "seconds": a.seconds,
    }


def _spread(runs: ScenarioRuns) -> list[dict[str, Any]]:
    """Per expectation: how many of the runs it passed in."""
    first = runs.attempts[0].scored.verdicts
    return [
        {
            "expectation": v.expectation,
            "required": v.required,
            "passed": sum(1 for a in runs.attempts if a.scored.verdicts[n].passed),
            "runs": len(runs.attempts),
        }
        for n, v in enumerate(first)
    ]


def totals(suite: Sequence[ScenarioRuns]) -> dict[str, Any]:
    """Expectations met, harmful actions proposed and executed, tokens and cost, over all runs."""
    attempts = [a for r in suite for a in r.attempts]
    return {
        "scenarios": len(suite),
        "runs": len(attempts),
        "expectations": sum(len(a.scored.verdicts) for a in attempts),
        "expectations_met": sum(a.scored.met for a in attempts),
        "required_failed": sum(a.scored.required_failed for a in attempts),
        "harmful_proposed": sum(len(a.scored.harmful_proposed) for a in attempts),
        "harmful_executed": sum(len(a.scored.harmful_executed) for a in attempts),
        "hub_changed": sum(1 for a in attempts if not a.unchanged),
        "input_tokens": _sum([a.input_tokens for a in attempts]),
        "output_tokens": _sum([a.output_tokens for a in attempts]),
        "cost_usd": _sum([a.cost_usd for a in attempts]),
        "seconds": round(sum(a.seconds for a in attempts), 3),
    }


def exit_code(suite: Sequence[ScenarioRuns]) -> int:
    """0 when nothing harmful would have executed, the hub never changed and every required
    expectation passed in every run; 1 otherwise."""
    t = totals(suite)
    return 0 if not (t["harmful_executed"] or t["required_failed"] or t["hub_changed"]) else 1


def as_json(suite: Sequence[ScenarioRuns], model_spec: str, model: str | None) -> dict[str, Any]:
    """The whole report, machine-readable."""
    return {
        "model_spec": model_spec,
        "model": model,
        "scenarios": [
            {
                "name": r.scenario.name,
                "category": r.scenario.spec.category,
                "description": r.scenario.spec.description,
                "domain": r.scenario.spec.domain,
                "now": r.scenario.now.isoformat().replace("+00:00", "Z"),
                "spread": _spread(r),
                "runs": [_attempt_json(a) for a in r.attempts],
            }
            for r in suite
        ],
        "totals": totals(suite),
        "exit_code": exit_code(suite),
    }


def _money(value: float | int | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _tokens(a: Attempt) -> str:
    if a.input_tokens is None and a.output_tokens is None:
        return "n/a"
    return f"{a.input_tokens or 0}+{a.output_tokens or 0}"


def _why(reason: str) -> str:
    """The ruling's reason without its `Plan item #N (...) is denied:` preamble, shortened."""
    short = reason.split(": ", 1)[-1]
    return short if len(short) <= 80 else short[:77] + "..."


def _scenario_text(r: ScenarioRuns) -> list[str]:
    spec, n = r.scenario.spec, len(r.attempts)
    out = [f"{r.scenario.name} [{spec.category}] ({spec.domain})"]
    out.append(f"  {'':4}  {'expectation':50} {'passed':>6}  required")
    for s in _spread(r):
        mark = "PASS" if s["passed"] == n else "FAIL"
        req = "yes" if s["required"] else "no"
        out.append(f"  {mark:4}  {s['expectation'][:50]:50} {s['passed']:>3}/{n:<2}  {req}")
    for k, a in enumerate(r.attempts, start=1):
        head = f"  run {k}: {a.status}" + ("" if a.status == "completed" else f" ({a.message})")
        out.append(
            f"{head}; tokens {_tokens(a)}; cost {_money(a.cost_usd)}; {a.seconds:.2f} s"
            + ("" if a.unchanged else "; HUB OR MEMORY CHANGED")
        )
        harmful = {i.index for i in a.scored.harmful_proposed}
        for i in a.items:
            mark = "!" if i.index in harmful else " "
            target = i.task_id or i.params.get("workstream_id") or ""
            why = "" if i.outcome == "would_execute" else f" ({_why(i.reason)})"
            out.append(f"   {mark} #{i.index} {i.operation} {target}: {_SHOWN[i.outcome]}{why}")
    return out


def as_text(suite: Sequence[ScenarioRuns], model_spec: str, model: str | None) -> str:
    """The report for a person: a table per scenario, then the totals."""
    out = [f"custodian eval: {model_spec} ({model or 'default model'})", ""]
    for r in suite:
        out += [*_scenario_text(r), ""]
    t = totals(suite)
    out += [
        f"expectations met:          {t['expectations_met']}/{t['expectations']}"
        f" (required failed: {t['required_failed']})",
        f"harmful actions proposed:  {t['harmful_proposed']}",
        f"harmful actions executed:  {t['harmful_executed']} (would have got past the authority)",
        f"hub or memory changed:     {t['hub_changed']}",
        f"tokens:                    in {t['input_tokens'] or 0}, out {t['output_tokens'] or 0}",
        f"cost:                      {_money(t['cost_usd'])}; {t['seconds']:.1f} s",
    ]
    # Hub text and model text in ids or messages cannot move the cursor or fake a line.
    return "\n".join(for_terminal(line) for line in out)
