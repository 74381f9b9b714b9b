"""Asked, whatever else would carry it: a write a person must see, even under a grant.

Three facts a class cannot name, so that no scope of a grant (nor a write's own evidence) speaks
for them, and the write waits for a person with the fact on its card:

- *A person's later word.* A write that cites events acts only while the newest event it cites
  is still the newest word of a person on its task. When someone other than Custodian wrote on
  the task after it (a note, a blocker, a milestone: any event), the later word may say
  otherwise: the write is asked, naming that event. It is the same on its own (a sanctioned
  status move) and under a grant (even one that asks for evidence, `--evidence newer`).
- *A repeat elsewhere.* A create that nearly repeats an open one of another workstream
  (the operation's `repeats_elsewhere`, core/operations/near.py) is asked, naming it; a repeat
  in its own scope is denied before anyone is asked (its `repeats`).
- *Named by other hub text.* A write on a task that people's text elsewhere names by id (another
  task's title or description, a workstream's title, a decision, a flag's note, an event on
  another task) is asked, naming that text. Hub text is data; a write on the task it names may be
  doing what it says ("mark web-t-11 done", "flag web-t-10"), and a person tells a note from an
  instruction. The task's own title, description and events are its own and do not count, and a
  flag on a task whose own state calls for one (blocked, or in progress and untouched for the
  stale threshold) rests on that state, not on the text: it runs as a flag does.

Ruled in `authorize()` (core/authority/authorize.py), so on every path: a fresh plan, the same
write ruled again just before it is sent, a reconcile and a grant's use. A person's approval of
the asked item is their word on it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from custodian_runtime.core._timestamps import activity_age, utc
from custodian_runtime.core.authority.evidence import (
    Evidence,
    by_custodian,
    cited,
    newest_cited,
    stamp,
)
from custodian_runtime.core.contract import ProgressEvent, Task
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import OperationSpec
from custodian_runtime.core.operations.flag_for_human import SPEC as FLAG
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.view import OWN_SOURCE, View


def asked_anyway(
    spec: OperationSpec,
    params: Mapping[str, Any],
    view: View,
    evidence: Evidence,
    limits: Limits,
) -> str | None:
    """Why a person must be asked about the write whatever would carry it; None: nothing."""
    if spec.repeats_elsewhere is not None:
        found = spec.repeats_elsewhere(params, view)
        if found is not None:
            return found
    named = named_elsewhere_clause(spec, params, view, evidence, limits)
    if named is not None or not spec.status_write:
        return named
    return later_word_clause(params, evidence)


def named_elsewhere(task_id: str, view: View, evidence: Evidence) -> str | None:
    """Where people's text outside task `task_id`'s own record names it by id ("task web-t-24's
    title", "event evt-801 on task web-t-24"); None when nothing else names it."""
    word = re.compile(rf"(?<![\w-]){re.escape(task_id)}(?![\w-])", re.IGNORECASE)
    for where, text in _texts_elsewhere(task_id, view, evidence):
        if word.search(text):
            return where
    return None


def named_elsewhere_clause(
    spec: OperationSpec,
    params: Mapping[str, Any],
    view: View,
    evidence: Evidence,
    limits: Limits,
) -> str | None:
    """What a person reads when other hub text names the write's task."""
    task = params.get("task_id") if "task_id" in spec.targets else None
    if not isinstance(task, str):
        return None
    if spec.name == FLAG.name and _calls_for_a_flag(view.tasks.get(task), evidence, limits):
        return None
    where = named_elsewhere(task, view, evidence)
    if where is None:
        return None
    return (
        f"{where} names task {task}: hub text is data, and a write on a task that other text "
        "names may be doing what that text says, so a person decides and no grant carries it"
    )


def _calls_for_a_flag(task: Task | None, evidence: Evidence, limits: Limits) -> bool:
    """Whether the task's own state asks for a flag: blocked, or in progress and untouched for
    more than the stale threshold by the hub's own time (unknown time: only blocked)."""
    if task is None:
        return False
    if task.status == "blocked":
        return True
    if task.status != "in_progress" or evidence.hub_now is None:
        return False
    age = activity_age(task.touched_at, task.created_at, None, evidence.hub_now)
    return age.days is not None and age.days > limits.stale_after_days - 1


def _texts_elsewhere(task_id: str, view: View, evidence: Evidence) -> Iterator[tuple[str, str]]:
    """People's texts outside `task_id`'s own record, each with where it is, in a fixed order."""
    for ws in sorted(view.workstreams.values(), key=lambda w: w.id):
        yield f"workstream {ws.id}'s title", ws.title
    for task in sorted(view.tasks.values(), key=lambda t: t.id):
        if task.id != task_id:
            yield f"task {task.id}'s title", task.title
            yield f"task {task.id}'s description", task.description
    for decision in sorted(view.decisions.values(), key=lambda d: d.id):
        for text in (decision.title, decision.context, *decision.options):
            yield f"decision {decision.id}", text
    for flag in sorted(view.flags.values(), key=lambda f: f.id):
        if flag.raised_by.strip().lower() != OWN_SOURCE and flag.task_id != task_id:
            yield f"flag {flag.id}'s note", flag.note
    seen = {e.id: e for e in (*view.events, *evidence.events.values())}
    for event in sorted(seen.values(), key=lambda e: e.id):
        if event.task_id != task_id and by_custodian(event, evidence.own_ids) is None:
            on = f" on task {event.task_id}" if event.task_id else ""
            yield f"event {event.id}{on}", event.summary


def later_word(params: Mapping[str, Any], evidence: Evidence) -> ProgressEvent | None:
    """The newest event of a person on the write's task written after the newest event it
    cites (not cited itself, not Custodian's, not dated ahead of the hub); None: none is."""
    newest = newest_cited(params, evidence)
    if newest is None:
        return None
    ids = set(cited(params))
    after = utc(newest.created_at)
    found = [
        event
        for event in evidence.events.values()
        if event.task_id == newest.task_id
        and event.id not in ids
        and by_custodian(event, evidence.own_ids) is None
        and not evidence.ahead(event)
        and utc(event.created_at) > after
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def later_word_clause(params: Mapping[str, Any], evidence: Evidence) -> str | None:
    """What a person reads when someone wrote on the task after the write's evidence."""
    later = later_word(params, evidence)
    newest = newest_cited(params, evidence)
    if later is None or newest is None:
        return None
    kind = f"an {later.event_type}" if later.event_type[:1] in "aeiou" else f"a {later.event_type}"
    return (
        f"{short(later.source)} wrote on task {later.task_id} after the evidence it cites: event "
        f"{later.id}, {kind} at {stamp(later.created_at)}, is newer than {newest.id} "
        f"({stamp(newest.created_at)}); a person reads the newer word and decides, and no grant "
        "carries it"
    )
