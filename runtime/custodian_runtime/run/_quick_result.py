"""What a quick skip returns: the summary `--json` prints and the terminal line (run/_quick.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A skip's counts, as `RunSoFar.counts()` gives them for a run with no plan item (a test pins it).
SKIP_COUNTS = {"executed": 0, "queued": 0, "denied": 0, "failed": 0, "stale": 0}
SUMMARY_LISTS = ("executed", "queued", "denied", "failed", "stale", "unknown", "would_execute",
                 "would_queue", "items", "observations", "reconciled", "late_landings",
                 "same_value", "shadow_matched")  # fmt: skip


@dataclass(frozen=True)
class QuickResult:
    """A run that skipped on a 304: what `--json` prints and the terminal line, as a
    `RunResult` of the same run gives them (a test pins both)."""

    run_id: str
    domain: str
    hub: str
    model_spec: str
    model: str | None
    status: str
    exit_code: int
    message: str

    def summary(self) -> dict[str, Any]:
        """The JSON summary printed by `--json`."""
        lists: dict[str, Any] = {name: [] for name in SUMMARY_LISTS}
        return {
            "run_id": self.run_id, "domain": self.domain, "status": self.status,
            "exit_code": self.exit_code, "message": self.message, "dry_run": False,
            "hub": self.hub, "model_spec": self.model_spec, "model": self.model, "usage": {},
            "counts": dict(SKIP_COUNTS), "modes": {}, **lists, "omitted": {}, "note": None,
            "model_stderr": None,
        }  # fmt: skip

    def human(self) -> str:
        """The line for a person at a terminal."""
        from custodian_runtime.core.inert import for_terminal

        return for_terminal(f"run {self.run_id} ({self.domain}): {self.status}: "
                            f"{for_terminal(self.message)}")  # fmt: skip
