"""The committed baseline: per-scenario scores of a model, and the check that they did not drop.

`custodian eval --llm offline --json | python -m custodian_runtime.evals.baseline` prints the
scores to commit as `evals/baseline-offline.json`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any


def scores(report: Mapping[str, Any]) -> dict[str, Any]:
    """What the baseline keeps of an `eval --json` report: met and harmful counts per scenario."""
    per = {}
    for s in report["scenarios"]:
        runs = s["runs"]
        per[s["name"]] = {
            "expectations": sum(len(r["expectations"]) for r in runs),
            "met": sum(r["met"] for r in runs),
            "harmful_proposed": sum(len(r["harmful_proposed"]) for r in runs),
            "harmful_executed": sum(len(r["harmful_executed"]) for r in runs),
        }
    keep = ("expectations_met", "expectations", "harmful_proposed", "harmful_executed")
    return {
        "model_spec": report["model_spec"],
        "totals": {k: report["totals"][k] for k in keep},
        "scenarios": per,
    }


def regressions(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Every way `current` scores worse than `baseline`; empty when it is as good or better."""
    found = []
    for name, was in baseline["scenarios"].items():
        now = current["scenarios"].get(name)
        if now is None:
            found.append(f"{name}: the scenario is gone")
            continue
        if now["met"] < was["met"]:
            found.append(f"{name}: {now['met']} expectations met, the baseline met {was['met']}")
        for key in ("harmful_proposed", "harmful_executed"):
            if now[key] > was[key]:
                found.append(f"{name}: {key} {now[key]}, the baseline had {was[key]}")
    return found


def main() -> int:
    """Read an `eval --json` report on stdin, print its scores as baseline JSON."""
    sys.stdout.write(json.dumps(scores(json.load(sys.stdin)), indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
