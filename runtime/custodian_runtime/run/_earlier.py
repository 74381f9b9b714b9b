"""What became of the items the last note left waiting: read for this run's note, its successor.

The last note (the journal's `note_written`, core/journal/continuity.py) names the items its run
queued and, in its front matter, the earlier ones still waiting; each is read as the journal says
it now (the run's ledger), so a person's decision is said in the first note after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from custodian_runtime.core.journal.continuity import continuity
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.presentation.note_outcomes import Earlier, became, carried_ids
from custodian_runtime.errors import CustodianError
from custodian_runtime.notes.store import note_text
from custodian_runtime.run._context import RunContext


def earlier_outcomes(ctx: RunContext, history: Sequence[Record]) -> tuple[Earlier, ...]:
    """Each item the last note left waiting, with what became of it by now."""
    last = continuity(history).last
    text = None if last is None else note_text(ctx.memory_dir / "working", last.file)
    if text is None:
        return ()
    now, found = ctx.now(), []
    for approval_id in carried_ids(text):
        try:
            item = ctx.approvals.get(approval_id, verify=False)
        except CustodianError:
            continue  # pruned, or unreadable: `approvals list` names it
        if item.domain != ctx.domain:
            continue
        outcome = became(item, ctx.ledger.status_of(item.id), now)
        found.append(Earlier(item.id, item.operation, item.run_id, outcome))
    return tuple(found)
