"""The last completed run's observation: what the next run compares the domain with."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple


class CompletedObservation(NamedTuple):
    """The state the last completed run acted on: lets the next run skip when nothing changed."""

    finished_at: datetime
    state_digest: str
    summary: dict[str, Any]
    snapshot: str | None = None
    generated_at: str | None = None
    # Contract v1.2 and later journals (additive: absent from older `observed` records).
    run_id: str | None = None
    revision: int | None = None  # the domain's revision as the hub named it
    inputs_digest: str | None = None  # canon, limits and grants (core/unchanged.inputs_digest)
    workstream_digests: dict[str, str] | None = None  # per workstream, as core/digest makes them
