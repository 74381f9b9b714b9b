"""Grounded writes: what the model writes into the hub names only what this run observed.

A progress event's summary and a flag's note become the hub's record. Each id-shaped word in
them (`web-t-04`, `evt-101`, `T-4`: letters, then `-` or `_` parts, ending in `-<digits>`) must be
an id of the observed domain (a workstream, task, open decision, open flag, or an event the run
saw), or a word that a person's observed text already uses (`SHA-256` in a task's description).
Anything else was invented, and the write is denied with the id named.

A progress event says what it reports: its `rests_on` lists the observed events or tasks it rests
on, and an id there that names neither an event the run saw nor a task of the domain is invented,
denied with the id named. A progress event that repeats a person's observed event as its own news
is denied too, naming the event: one whose summary nearly repeats that event's (the near-repeat
measure of core/operations/near.py, ids left aside), or one that quotes it without naming it.

A status write's evidence is held to the same rule: an event id it cites that is neither among
the domain's recent events nor among its task's events, read whole by this run, does not exist
where the model could have seen it, and the write is denied, not queued for a person.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from custodian_runtime.core._normalized import normalized_text
from custodian_runtime.core.authority.evidence import Evidence, by_custodian, cited
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.operations.near import nearly_repeats
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.view import OWN_SOURCE, View, without_run_mark

# An id as hubs write them: `T-4`, `evt-000042`, `web-t-04`, `plat_ws_1`.
ID_SHAPED = re.compile(r"(?<![\w.:/-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_][0-9]+(?![\w-])")
# A run's own id (clock.new_run_id): Custodian's mark, never a hub's fact, though its hex part
# is all digits about one time in seventeen, and then it looks like one.
RUN_ID = re.compile(r"r\d{8}T\d{6}Z-[0-9a-f]{6}")
# A person's event shorter than this is repeated only when the whole text is the same.
_QUOTE_MIN = 24


def id_shaped(text: str) -> tuple[str, ...]:
    """The id-shaped words of `text`, each once, in order."""
    found = (m.group(0) for m in ID_SHAPED.finditer(text))
    return tuple(dict.fromkeys(w for w in found if not RUN_ID.fullmatch(w)))


def observed_ids(view: View, evidence: Evidence) -> frozenset[str]:
    """Every id this run observed, casefolded: the domain's items and every event it saw."""
    tables: tuple[Mapping[str, Any], ...] = (
        view.workstreams,
        view.tasks,
        view.decisions,
        view.flags,
        evidence.events,
    )
    found = {view.domain, *(e.id for e in view.events)}
    for table in tables:
        found.update(table)
    return frozenset(i.casefold() for i in found)


def _people_texts(view: View, evidence: Evidence) -> Iterator[str]:
    """The observed texts that people (not Custodian) wrote."""
    for ws in view.workstreams.values():
        yield ws.title
    for task in view.tasks.values():
        yield task.title
        yield task.description
    for decision in view.decisions.values():
        yield from (decision.title, decision.context, *decision.options)
    for flag in view.flags.values():
        if flag.raised_by.strip().lower() != OWN_SOURCE:
            yield flag.note
    for event in _events(view, evidence):
        if by_custodian(event, evidence.own_ids) is None:
            yield event.summary


def _events(view: View, evidence: Evidence) -> tuple[ProgressEvent, ...]:
    seen = {e.id: e for e in (*view.events, *evidence.events.values())}
    return tuple(seen.values())


def unobserved_ids(text: str, view: View, evidence: Evidence) -> tuple[str, ...]:
    """The id-shaped words of `text` that name nothing this run observed."""
    known = observed_ids(view, evidence)
    unknown = [i for i in id_shaped(text) if i.casefold() not in known]
    if not unknown:
        return ()
    used = {w.casefold() for t in _people_texts(view, evidence) for w in id_shaped(t)}
    return tuple(i for i in unknown if i.casefold() not in used)


def repeated_event(text: str, view: View, evidence: Evidence) -> ProgressEvent | None:
    """A person's observed event that `text` repeats as if new, or None: one it nearly repeats
    in other words (whether or not it names it), or one it quotes without naming it."""
    mine = normalized_text(text)
    named = {i.casefold() for i in id_shaped(text)}
    for event in sorted(_events(view, evidence), key=lambda e: e.id):
        if by_custodian(event, evidence.own_ids) is not None:
            continue
        said = without_run_mark(event.summary)
        if nearly_repeats(without_ids(text), without_ids(said)):
            return event
        theirs = normalized_text(said)
        if event.id.casefold() in named or not theirs:
            continue
        if theirs == mine or (len(theirs) >= _QUOTE_MIN and theirs in mine):
            return event
    return None


def without_ids(text: str) -> str:
    """`text` without its id-shaped words, so that naming an event does not hide a repeat."""
    return ID_SHAPED.sub(" ", text)


def unfounded(
    params: Mapping[str, Any], key: str | None, view: View, evidence: Evidence
) -> str | None:
    """Why the events or tasks a write says it rests on (`params[key]`) were not observed;
    None when each is an event this run saw or a task of the domain."""
    rests = params.get(key) if key is not None else None
    if not isinstance(rests, list | tuple):
        return None
    events = {e.id for e in _events(view, evidence)}
    absent = tuple(str(i) for i in rests if i not in events and i not in view.tasks)
    if not absent:
        return None
    return (
        f"its {key} names {_listed(absent)}, which this run did not observe as an event or a "
        "task; a progress event rests only on observed events or tasks"
    )


def text_problem(
    params: Mapping[str, Any],
    keys: Sequence[str],
    news: str | None,
    view: View,
    evidence: Evidence,
) -> str | None:
    """Why the texts under `keys` are not grounded in the observation; None when they are.

    `news` is the key whose text must be news: it may not repeat a person's event unnamed.
    """
    for key in keys:
        text = params.get(key)
        if not isinstance(text, str):
            continue
        unknown = unobserved_ids(text, view, evidence)
        if unknown:
            return (
                f"its {key} names {_listed(unknown)}, which this run did not observe; what "
                "Custodian writes names only observed ids"
            )
        if key == news:
            copied = repeated_event(text, view, evidence)
            if copied is not None:
                return (
                    f"its {key} repeats event {copied.id} from {short(copied.source)} as if it "
                    "were new; a progress event records what follows from the events it rests "
                    "on, not their news again"
                )
    return None


def invented_evidence(params: Mapping[str, Any], evidence: Evidence) -> str | None:
    """Why a status write's cited events do not exist where the run looked; None otherwise.

    Only a task whose events this run read whole can show that an id is absent from it.
    """
    task = params.get("task_id")
    if not isinstance(task, str) or task not in evidence.read_tasks:
        return None
    absent = tuple(i for i in cited(params) if i not in evidence.events)
    if not absent:
        return None
    return (
        f"it cites {_listed(absent, 'event')}, which this run did not observe (not among the "
        f"domain's recent events, nor among task {task}'s events); evidence names only "
        "observed events"
    )


def _listed(ids: Sequence[str], kind: str = "") -> str:
    words = [short(i, 40) if not ID_SHAPED.fullmatch(i) else i for i in ids]
    prefix = f"{kind}s " if kind and len(ids) > 1 else f"{kind} " if kind else ""
    if len(words) == 1:
        return prefix + words[0]
    return prefix + ", ".join(words[:-1]) + " and " + words[-1]
