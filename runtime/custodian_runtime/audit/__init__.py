"""Reading the journal back: `custodian inspect` (verify, show) and `replay` (re-decide)."""

from __future__ import annotations

from custodian_runtime.audit.inspection import EXIT_NOT_FOUND, inspect_command
from custodian_runtime.audit.replay import replay_command

__all__ = ["EXIT_NOT_FOUND", "inspect_command", "replay_command"]
