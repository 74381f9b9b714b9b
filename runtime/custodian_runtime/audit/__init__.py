"""Reading the journal back: `inspect` (verify, show), `replay` (re-decide), `journal settle`."""

from __future__ import annotations

from custodian_runtime.audit.inspection import EXIT_NOT_FOUND, inspect_command
from custodian_runtime.audit.replay import replay_command
from custodian_runtime.audit.settle import settle_command

__all__ = ["EXIT_NOT_FOUND", "inspect_command", "replay_command", "settle_command"]
