"""What deciding an item came to: below the commands and the recorded decisions that return it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecisionReport:
    """What deciding an item came to: its exit code and the one line the CLI prints."""

    approval_id: str
    exit_code: int
    message: str
