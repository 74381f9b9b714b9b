"""The state-hub contract on a Redmine, as data: kinds, statuses, notes, marks, revisions (pure).

A domain is a project (its identifier is the domain's name). Workstreams, tasks, flags and
decisions are issues of four trackers named for them; a task is a subtask of its workstream.
A progress event is a journal note on its task (or its workstream). What Redmine has no field
for (an owner, who raised a flag, a decision's options, the write marks) is kept as JSON in one
long-text issue custom field, `Custodian`. Redmine's wire format lives here and in the backend's
shell (statehub/backends/redmine.py), nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.trackers.address import StandIn

RedmineIssue = Mapping[str, Any]  # one Redmine issue as its REST API gives it (with its journals)
FIELD = "Custodian"  # the issue custom field (long text) that keeps what Redmine has no field for
MAX_MARKS = 32
_TRAILER = "\n\n-- custodian "  # a note's last line: its event's type, source and mark


@dataclass(frozen=True)
class IssueKind:
    """One noun of the contract as a Redmine tracker, and its statuses by Redmine's names."""

    tracker: str
    prefix: str
    statuses: Mapping[str, str]  # the contract's status -> Redmine's status name


WORKSTREAM = IssueKind("Workstream", "w", {"active": "New", "paused": "Feedback", "done": "Closed"})
TASK = IssueKind(
    "Task",
    "t",
    {
        "todo": "New",
        "in_progress": "In Progress",
        "blocked": "Feedback",
        "done": "Closed",
        "cancelled": "Rejected",
    },
)
FLAG = IssueKind("Flag", "f", {"open": "New", "resolved": "Closed"})
DECISION = IssueKind("Decision", "d", {"open": "New", "resolved": "Closed"})
KINDS: tuple[IssueKind, ...] = (WORKSTREAM, TASK, FLAG, DECISION)
STATUS_NAMES: tuple[str, ...] = tuple(sorted({n for k in KINDS for n in k.statuses.values()}))

STAND_INS: tuple[StandIn, ...] = (
    StandIn(
        "idempotency keys",
        "each write keeps its key in what Redmine keeps: a create's in the new issue's "
        "`Custodian` field, a change's in the changed issue's, an event's in its note; it is "
        "looked for there before the write is sent, and a found one is answered as a replay",
    ),
    StandIn(
        "conditional writes",
        "Redmine takes `lock_version` on a write but never shows it, and ignores If-Match: the "
        "contract's If-Match is checked against the task's version read just before the change, "
        "and a person's change in the one request between is not seen",
    ),
    StandIn(
        "task versions",
        "1 plus the issue's journals that changed a field (a note alone does not count), read "
        "from the issue's journals",
    ),
    StandIn(
        "domain revisions",
        "the sum of the versions of the project's issues plus its number of events; every issue "
        "is read with its journals, so a 304 spares the client's parsing only",
    ),
    StandIn(
        "hub identity",
        "made from the URL Custodian is given: another port or a proxy is another hub",
    ),
    StandIn(
        "contract ids",
        "the issue number behind a letter of its kind (w, t, f, d); an event's is its "
        "journal's number behind e",
    ),
    StandIn(
        "domain names",
        "a project's identifier: a name of digits only is a valid domain and no identifier",
    ),
    StandIn("timestamps", "Redmine's, to the second"),
)


def contract_id(kind_prefix: str, number: object) -> str:
    """The contract's id of an issue or a journal: `t12` for task 12."""
    return f"{kind_prefix}{number}"


def number_in(prefix: str, contract: str | None) -> str | None:
    """The number a contract id names with `prefix`, or None when it names none."""
    if contract is None or not contract.startswith(prefix):
        return None
    number = contract[len(prefix) :]
    return number if number.isdigit() and not number.startswith("0") else None


def hub_id(url: str) -> str:
    """A Redmine's hub_id, made from its URL."""
    return f"redmine.{sha256_hex(url.rstrip('/').lower().encode('utf-8'))[:32]}"


def status_of(kind: IssueKind, redmine_name: str) -> str:
    """The contract's status of a Redmine status name; ValueError naming the field otherwise."""
    for status, name in kind.statuses.items():
        if name == redmine_name:
            return status
    raise ValueError(
        f"a {kind.tracker} issue has status {redmine_name!r}, which Custodian does not map "
        f"(known: {', '.join(kind.statuses.values())})"
    )


# --- the Custodian field: what Redmine has no field for, and the marks ------------------------


def extra(issue: RedmineIssue, field_id: int) -> dict[str, Any]:
    """The issue's `Custodian` field as a dict ({} when empty or not JSON)."""
    for field in issue.get("custom_fields") or ():
        if field.get("id") == field_id and field.get("value"):
            try:
                value = json.loads(str(field["value"]))
            except ValueError:
                return {}
            return dict(value) if isinstance(value, dict) else {}
    return {}


def mark_digest(data: Mapping[str, Any], key: str) -> str | None:
    """The body digest kept with `key` in a field's marks, or None."""
    for pair in data.get("marks") or ():
        if isinstance(pair, list) and len(pair) == 2 and pair[0] == key:
            return str(pair[1])
    return None


def with_mark(data: Mapping[str, Any], key: str, digest: str) -> dict[str, Any]:
    """The field's data with this write's mark added, the oldest dropped past MAX_MARKS."""
    kept = [pair for pair in data.get("marks") or () if isinstance(pair, list)]
    return {**data, "marks": [*kept[-(MAX_MARKS - 1) :], [key, digest]]}


def field_text(data: Mapping[str, Any]) -> str:
    """The `Custodian` field's value."""
    return json.dumps(dict(data), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# --- events: journal notes ---------------------------------------------------------------------


def note_text(summary: str, event_type: str, source: str, mark: tuple[str, str] | None) -> str:
    """An event as a journal note: its summary, then one line of what Redmine has no field for."""
    meta: dict[str, Any] = {"event_type": event_type, "source": source}
    if mark is not None:
        meta["mark"] = list(mark)
    return f"{summary}{_TRAILER}{json.dumps(meta, ensure_ascii=False, sort_keys=True)}"


def note_meta(notes: str) -> tuple[str, dict[str, Any]]:
    """A note's summary and its trailer's data ({} for a note a person typed)."""
    summary, found, meta = notes.rpartition(_TRAILER)
    if not found:
        return notes, {}
    try:
        data = json.loads(meta)
    except ValueError:
        return notes, {}
    return (summary, dict(data)) if isinstance(data, dict) else (notes, {})


def event(entry: Mapping[str, Any], workstream: str, task: str | None) -> dict[str, Any]:
    """A Redmine journal entry's note as the contract's ProgressEvent; a person's note is
    theirs, a `note`."""
    summary, meta = note_meta(str(entry.get("notes") or ""))
    person = (entry.get("user") or {}).get("name")
    return {
        "id": contract_id("e", entry["id"]),
        "workstream_id": workstream,
        "task_id": task,
        "event_type": meta.get("event_type", "note"),
        "summary": summary,
        "source": meta.get("source", person or "redmine"),
        "created_at": entry.get("created_on"),
    }


def events_of(issue: RedmineIssue) -> list[Mapping[str, Any]]:
    """The issue's journals that carry a note: its events, oldest first."""
    return [j for j in issue.get("journals") or () if str(j.get("notes") or "").strip()]


def version(issue: RedmineIssue) -> int:
    """An issue's version: 1, plus one for each journal that changed a field."""
    return 1 + sum(1 for j in issue.get("journals") or () if j.get("details"))


def revision(issues: Iterable[RedmineIssue]) -> int:
    """A domain's revision: its issues' versions plus its events."""
    return sum(version(issue) + len(events_of(issue)) for issue in issues)


# --- issues as the contract's resources ---------------------------------------------------------


def _parent(issue: RedmineIssue) -> str | None:
    parent = issue.get("parent")
    return None if not parent else contract_id("w", parent.get("id"))


def _status(kind: IssueKind, issue: RedmineIssue) -> str:
    return status_of(kind, str((issue.get("status") or {}).get("name")))


def workstream(issue: RedmineIssue, field_id: int, domain: str) -> dict[str, Any]:
    """A Workstream issue as the contract's Workstream."""
    return {
        "id": contract_id("w", issue["id"]),
        "domain": domain,
        "title": issue.get("subject"),
        "status": _status(WORKSTREAM, issue),
        "owner": extra(issue, field_id).get("owner"),
        "created_at": issue.get("created_on"),
        "updated_at": issue.get("updated_on"),
    }


def task(issue: RedmineIssue, field_id: int) -> dict[str, Any]:
    """A Task issue (a subtask of its workstream's) as the contract's Task."""
    return {
        "id": contract_id("t", issue["id"]),
        "workstream_id": _parent(issue),
        "title": issue.get("subject"),
        "description": issue.get("description") or "",
        "status": _status(TASK, issue),
        "assignee": extra(issue, field_id).get("assignee"),
        "due": issue.get("due_date"),
        "created_at": issue.get("created_on"),
        "updated_at": issue.get("updated_on"),
        "version": version(issue),
    }


def flag(issue: RedmineIssue, field_id: int) -> dict[str, Any]:
    """A Flag issue as the contract's Flag; its links are kept in the Custodian field."""
    data = extra(issue, field_id)
    resolved = _status(FLAG, issue) == "resolved"
    return {
        "id": contract_id("f", issue["id"]),
        "workstream_id": data.get("workstream_id"),
        "task_id": data.get("task_id"),
        "note": issue.get("description") or issue.get("subject"),
        "status": _status(FLAG, issue),
        "raised_by": data.get("raised_by"),
        "created_at": issue.get("created_on"),
        "resolved_at": issue.get("closed_on") if resolved else None,
    }


def decision(issue: RedmineIssue, field_id: int, domain: str) -> dict[str, Any]:
    """A Decision issue as the contract's Decision."""
    data = extra(issue, field_id)
    resolved = _status(DECISION, issue) == "resolved"
    return {
        "id": contract_id("d", issue["id"]),
        "domain": domain,
        "workstream_id": data.get("workstream_id"),
        "title": issue.get("subject"),
        "context": issue.get("description") or "",
        "options": [str(option) for option in data.get("options") or ()],
        "status": _status(DECISION, issue),
        "resolution": data.get("resolution"),
        "created_at": issue.get("created_on"),
        "resolved_at": issue.get("closed_on") if resolved else None,
    }
