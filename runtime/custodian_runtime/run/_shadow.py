"""Shadow items a person did the same way on the hub: journaled once each, and reported.

The core decides which (core/standing/shadow.py); this module only journals a `shadow_matched`
record per match and returns what the run's summary and note say. Nothing is sent to the hub.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.standing.shadow import matches, own_changes, waiting
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.observe import Observation


def record_shadow_matches(
    ctx: RunContext,
    history: list[core_journal.Record],
    observation: Observation,
    writes: Sequence[OwnWrite] = (),
) -> tuple[dict[str, Any], ...]:
    """Journal each waiting shadow item `observation` shows a person made; one report each.

    `writes` are Custodian's own writes (the checkpoint's): a change Custodian made is no person's.
    """
    items = waiting(history, ctx.now())
    if not items:
        return ()
    hub = ctx.bound()["hub"]
    found = matches(items, observation.summary, own_changes(history, writes), hub)
    reports = []
    for match in found:
        ctx.journal.write(match.entry())
        reports.append(match.report())
        ctx.log.line("shadow", "matched", operation=match.item.entry.operation, hub_id=match.hub_id)
    return tuple(reports)
