"""The statuses of an approval item, kept apart from its model so the CLI lists them cheaply."""

from __future__ import annotations

from typing import Literal

ApprovalStatus = Literal[
    "pending", "approved", "executed", "failed", "stale", "expired", "rejected", "unknown"
]
