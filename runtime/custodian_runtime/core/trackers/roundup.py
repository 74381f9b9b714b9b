"""The state-hub contract on a Roundup tracker, as data: ids, items, marks, revisions (pure).

The tracker runs the schema shipped in `_data/roundup/`: one Roundup class per noun of the
contract, each with a `version` that its detector grows on every change and a `marks` property
that keeps the marks of the writes Custodian made there. Roundup's wire format lives here and in
the backend's shell (statehub/backends/roundup.py), nowhere else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.trackers.address import StandIn

Item = Mapping[str, Any]  # one Roundup item: its id and its properties, as REST lists them


@dataclass(frozen=True)
class Kind:
    """One noun of the contract as a Roundup class: its class name, id prefix and properties."""

    klass: str
    prefix: str
    fields: tuple[str, ...]


_STAMPS = ("creation", "activity", "created_at", "updated_at", "version", "marks")
WORKSTREAM = Kind("workstream", "w", ("domain", "title", "status", "owner", *_STAMPS))
TASK = Kind(
    "task",
    "t",
    ("workstream", "title", "description", "status", "assignee", "due", *_STAMPS),
)
EVENT = Kind(
    "progress_event", "e", ("workstream", "task", "event_type", "summary", "source", *_STAMPS)
)
FLAG = Kind(
    "flag", "f", ("workstream", "task", "note", "status", "raised_by", "resolved_at", *_STAMPS)
)
DECISION = Kind(
    "decision",
    "d",
    (
        "domain",
        "workstream",
        "title",
        "context",
        "options",
        "status",
        "resolution",
        "resolved_at",
        *_STAMPS,
    ),
)
KINDS: tuple[Kind, ...] = (WORKSTREAM, TASK, EVENT, FLAG, DECISION)

MAX_MARKS = 32  # the marks an item keeps: a lost answer is found among its last 32 writes
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.(\d{2}:\d{2}:\d{2})(\.\d+)?$")
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")  # the detector's

STAND_INS: tuple[StandIn, ...] = (
    StandIn(
        "idempotency keys",
        "each write keeps its key in the item's `marks`; a write is looked for by its mark "
        "before it is sent, and a found one is answered as a replay (the item as it is now)",
    ),
    StandIn(
        "domain revisions",
        "the sum of the versions of the domain's workstreams, tasks, flags and decisions plus "
        "its number of events; a 304 spares the client's parsing, not the tracker's reads",
    ),
    StandIn(
        "hub identity",
        "made from the web address in the tracker's own configuration (its REST links), so a "
        "proxy or another port reaches the same hub; a new tracker at the same address is not "
        "told apart",
    ),
    StandIn("contract ids", "Roundup's item number behind a letter of its class (w, t, e, f, d)"),
    StandIn("timestamps", "the detector's, to the microsecond (else Roundup's, to the second)"),
    StandIn(
        "who wrote",
        "the tracker's user: a person's event has their username as its `source`, and their "
        "change of a task's status is said by a `status_change` event made as them",
    ),
)


def contract_id(kind: Kind, roundup_id: str) -> str:
    """The contract's id of a Roundup item: `t12` for task 12."""
    return f"{kind.prefix}{roundup_id}"


def roundup_id(kind: Kind, contract: str) -> str | None:
    """The Roundup item number a contract id names, or None when it names no item of `kind`."""
    number = contract[len(kind.prefix) :]
    if not contract.startswith(kind.prefix) or not number.isdigit() or number.startswith("0"):
        return None
    return number


def wire_time(value: str | None) -> str | None:
    """A Roundup date (`2026-12-07.06:45:25`, UTC) as the contract's RFC 3339 timestamp."""
    if value is None:
        return None
    found = _DATE.fullmatch(value)
    if found is None:
        raise ValueError(f"not a Roundup date: {value!r}")
    day, clock, fraction = found.groups()
    return f"{day}T{clock}{fraction or ''}Z"


def stamp(item: Item, name: str, fallback: str) -> str | None:
    """The item's `created_at` or `updated_at` as the detector stamped it, or Roundup's own
    (`fallback`: `creation`, `activity`) when it has none."""
    value = item.get(name)
    if isinstance(value, str) and _STAMP.fullmatch(value):
        return value
    return wire_time(item.get(fallback))


def hub_id(url: str) -> str:
    """A tracker's hub_id, made from the web address its own configuration gives it."""
    return f"roundup.{sha256_hex(url.rstrip('/').lower().encode('utf-8'))[:32]}"


def tracker_id(root: Mapping[str, Any]) -> str | None:
    """The hub_id of the tracker whose REST root (`GET /rest`) this is: its links name the
    tracker's configured web address, whatever URL, port or proxy the request came through.
    None when the root names no `self` link."""
    links = root.get("links")
    for link in links if isinstance(links, list) else ():
        if isinstance(link, Mapping) and link.get("rel") == "self" and link.get("uri"):
            return hub_id(str(link["uri"]).removesuffix("/rest"))
    return None


def number_of(value: object) -> str | None:
    """A Link's item number, as a list gives it (`{"id": "3", "link": ...}`) or an item does."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return None if value in (None, "") else str(value)


def _link(kind: Kind, value: object) -> str | None:
    number = number_of(value)
    return None if number is None else contract_id(kind, number)


def _created(item: Item) -> dict[str, Any]:
    return {"created_at": stamp(item, "created_at", "creation")}


def _updated(item: Item) -> dict[str, Any]:
    return {"updated_at": stamp(item, "updated_at", "activity")}


def workstream(item: Item) -> dict[str, Any]:
    """A Roundup workstream as the contract's Workstream."""
    return {
        "id": contract_id(WORKSTREAM, str(item["id"])),
        "domain": item.get("domain"),
        "title": item.get("title"),
        "status": item.get("status"),
        "owner": item.get("owner"),
        **_created(item),
        **_updated(item),
    }


def task(item: Item) -> dict[str, Any]:
    """A Roundup task as the contract's Task; its `version` is the detector's."""
    return {
        "id": contract_id(TASK, str(item["id"])),
        "workstream_id": _link(WORKSTREAM, item.get("workstream")),
        "title": item.get("title"),
        "description": item.get("description") or "",
        "status": item.get("status"),
        "assignee": item.get("assignee"),
        "due": item.get("due") or None,
        **_created(item),
        **_updated(item),
        "version": int(item.get("version") or 1),
    }


def event(item: Item) -> dict[str, Any]:
    """A Roundup progress_event as the contract's ProgressEvent."""
    return {
        "id": contract_id(EVENT, str(item["id"])),
        "workstream_id": _link(WORKSTREAM, item.get("workstream")),
        "task_id": _link(TASK, item.get("task")),
        "event_type": item.get("event_type"),
        "summary": item.get("summary"),
        "source": item.get("source"),
        **_created(item),
    }


def flag(item: Item) -> dict[str, Any]:
    """A Roundup flag as the contract's Flag."""
    return {
        "id": contract_id(FLAG, str(item["id"])),
        "workstream_id": _link(WORKSTREAM, item.get("workstream")),
        "task_id": _link(TASK, item.get("task")),
        "note": item.get("note"),
        "status": item.get("status"),
        "raised_by": item.get("raised_by"),
        **_created(item),
        "resolved_at": wire_time(item.get("resolved_at")),
    }


def decision(item: Item) -> dict[str, Any]:
    """A Roundup decision as the contract's Decision; its options are kept as a JSON list."""
    return {
        "id": contract_id(DECISION, str(item["id"])),
        "domain": item.get("domain"),
        "workstream_id": _link(WORKSTREAM, item.get("workstream")),
        "title": item.get("title"),
        "context": item.get("context") or "",
        "options": _options(item.get("options")),
        "status": item.get("status"),
        "resolution": item.get("resolution"),
        **_created(item),
        "resolved_at": wire_time(item.get("resolved_at")),
    }


def _options(text: object) -> list[str]:
    try:
        options = json.loads(str(text)) if text else []
    except ValueError:
        return [str(text)]  # a person typed one option by hand
    return [str(option) for option in options] if isinstance(options, list) else [str(text)]


# --- marks: the write a lost answer was for, found in what the tracker keeps -----------------


def marks_of(text: object) -> tuple[tuple[str, str], ...]:
    """The (key, body digest) marks an item's `marks` keeps, oldest first; () when unreadable."""
    try:
        pairs = json.loads(str(text)) if text else []
    except ValueError:
        return ()
    if not isinstance(pairs, list):
        return ()
    return tuple(
        (pair[0], pair[1])
        for pair in pairs
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
    )


def mark_digest(text: object, key: str) -> str | None:
    """The body digest kept with `key` in an item's marks, or None when no write of it is there."""
    return next((digest for found, digest in marks_of(text) if found == key), None)


def with_mark(text: object, key: str, digest: str) -> str:
    """The item's marks with this write's added, the oldest dropped past MAX_MARKS."""
    kept = [list(pair) for pair in marks_of(text)][-(MAX_MARKS - 1) :]
    return json.dumps([*kept, [key, digest]], separators=(",", ":"))


def marked(items: Iterable[Item], key: str) -> Item | None:
    """The first item whose marks hold `key` (a search by substring can find look-alikes)."""
    return next((item for item in items if mark_digest(item.get("marks"), key) is not None), None)


# --- the domain as the contract reads it ------------------------------------------------------


def revision(
    workstreams: Iterable[Item],
    tasks: Iterable[Item],
    flags: Iterable[Item],
    decisions: Iterable[Item],
    events: int,
) -> int:
    """The domain's revision: grows by one with every item made and every change to one."""
    versions = (
        int(item.get("version") or 1)
        for group in (workstreams, tasks, flags, decisions)
        for item in group
    )
    return sum(versions) + events


def options_text(options: Iterable[str]) -> str:
    """A decision's options as its `options` property keeps them: a JSON list."""
    return json.dumps(list(options), ensure_ascii=False)
