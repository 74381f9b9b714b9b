"""The run past its conditional read: observe, settle, orient, ask, rule, act, record.

Imported only when the hub says the domain moved (or nothing could be asked): a run that skips
on a 304 loads none of it (run/_runner.py), so a skip costs the imports of what decides it.
"""

from __future__ import annotations

from dataclasses import replace

from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.plan.extract import Plan
from custodian_runtime.core.presentation import display
from custodian_runtime.core.run_rules import EXIT_OK, Ending, ending, observes_after_act
from custodian_runtime.errors import CustodianError
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._ending import failed, finish, skipped
from custodian_runtime.run._reconcile import reconcile_open_writes
from custodian_runtime.run._result import RunResult, RunSoFar
from custodian_runtime.run._shadow import record_shadow_matches
from custodian_runtime.run._unchanged import ConditionalRead, unchanged_state
from custodian_runtime.run.act import act, dry_run
from custodian_runtime.run.decide import ask, extract, rule, usage_dict
from custodian_runtime.run.observe import observe, observe_after_act
from custodian_runtime.run.orient import orient
from custodian_runtime.run.record import NoteParts, reconcile_text, record


def read_and_decide(
    ctx: RunContext,
    so_far: RunSoFar,
    history: list[core_journal.Record],
    writes: tuple[OwnWrite, ...],
    asked: ConditionalRead,
) -> RunResult:
    """From the domain's read to the run's end; `so_far` replaced with what each step returns."""
    try:  # a failure is ended with what the steps had found by then (the answer, its usage)
        seen = observe(ctx, asked.summary)
        so_far = replace(so_far, titles=display.titles(seen.summary), seen=seen.summary)
        if not ctx.dry_run:
            settled = reconcile_open_writes(ctx, history, seen, writes)
            seen = settled.observation
            so_far = replace(
                so_far, reconciled=settled.reports, titles=display.titles(seen.summary)
            )
            so_far = replace(so_far, seen=seen.summary)
            ctx.journal.close_interrupted(history)
            matched = record_shadow_matches(ctx, history, seen, writes)
            so_far = replace(so_far, shadow_matched=matched)
        skip = unchanged_state(ctx, seen, history)
        if skip is not None:
            return skipped(ctx, so_far, skip, "state unchanged since the last completed run")
        orientation = orient(ctx, seen, history)
        so_far = replace(so_far, omitted=orientation.omitted)
        if orientation.canon.sections:
            sections = orientation.canon.sections
            so_far = replace(so_far, canon=orientation.cited, canon_sections=sections)
        completion = ask(ctx, orientation, seen, history, writes)
        so_far = replace(so_far, model=completion.model, usage=usage_dict(completion))
        so_far = replace(so_far, answer=completion.text)
        plan = extract(ctx, completion)
        so_far = replace(so_far, observations=plan.observations)
        ruled = rule(ctx, plan, seen, history, writes)
        rulings = ruled.rulings
        so_far = replace(so_far, narrowed=ruled.narrowed)
        so_far = replace(so_far, rulings=rulings, contents=display.contents(rulings))
        so_far = replace(so_far, modes=ruled.grounds.standing.modes.as_record())
        if ctx.dry_run:
            ctx.stop.check("the dry run")
            shown = Ending("completed", EXIT_OK, "decisions shown, nothing sent or saved")
            return finish(ctx, replace(so_far, outcomes=dry_run(rulings)), shown)
        return recorded(ctx, replace(so_far, outcomes=act(ctx, ruled, seen)), plan)
    except CustodianError as exc:
        return failed(ctx, so_far, exc)


def recorded(ctx: RunContext, so_far: RunSoFar, plan: Plan) -> RunResult:
    """After acting: observe what the writes left, write the note, and finish."""
    c = so_far.counts()
    if observes_after_act(c, stopped=bool(ctx.stop)):
        observe_after_act(ctx)
    end = ending(
        stopped_by=ctx.stop.signal,
        executed=c["executed"],
        queued=c["queued"],
        denied=c["denied"],
        failed=c["failed"],
        stale=c["stale"],
        unknown=c.get("unknown", 0),
    )
    parts = NoteParts(
        prose=plan.prose,
        rulings=so_far.rulings,
        observations=plan.observations,
        problem=reconcile_text(so_far.reconciled),
    )
    return finish(ctx, so_far, end, record(ctx, so_far, end.status, parts))
