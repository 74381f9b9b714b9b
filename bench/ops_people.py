"""The two people who decide in the ops world (bench/ops_world.py), and their written rules.

Written before any measurement, and not tuned to any lever. Who decides an item follows
ownership: the owner of the item's workstream (a task's workstream for a status move; the
`workstream_id` param for a create or a decision). Mia owns `ops-ws-1`..`ops-ws-4`, Omar
`ops-ws-5`..`ops-ws-8`. Each approves unless one rule below rejects, and says why.

Both people, in this order:

1. **An owner's word stands.** A move to `blocked` or `cancelled` on a task whose owner set its
   status on the hub in the last 7 days is rejected ("<owner> set it <status> on <date>; that
   stands"), unless the proposal cites a blocker or note the owner wrote after that. A team
   member's event does not lift it: the owner's word counts more than the team's.
2. **Cancelling.** Mia rejects every cancellation ("cancelling is the owner's call: we close
   work by shipping it, not from the tracker"). Omar approves a cancellation of a task still
   `todo` whose last change is 14 days old or more (backlog pruning) and rejects any other
   ("it is under way; ask whoever works on it").
3. **Blocked needs a newer word of the team.** A move to `blocked` is approved only when it
   cites an event of a person (not Custodian's own) on that task, newer than the task's last
   change. Rejected with "cites no word of the team" or "cites <id>, older than the task's last
   change". Mia takes any kind of event; Omar only a `blocker` ("a note is not a blocker").
4. **No duplicates.** A `create_task` whose title repeats an open task of its workstream in
   other words (case, punctuation, articles, "again", and a few synonyms ignored: `same_task`)
   is rejected ("duplicates <id> '<title>'").

Anything else (a new task that repeats nothing, a decision to record, a move to done or
in_progress) is approved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from month_kit import OWN_SOURCE, Verdict, Words

OWNERS = {
    "mia": ("ops-ws-1", "ops-ws-2", "ops-ws-3", "ops-ws-4"),
    "omar": ("ops-ws-5", "ops-ws-6", "ops-ws-7", "ops-ws-8"),
}
STATUS_WRITES = ("set_task_status", "update_task_status")
OPEN = ("todo", "in_progress", "blocked")
OWNER_HOLDS = timedelta(days=7)
IDLE = timedelta(days=14)
# What a person reads past when two titles name the same task.
_FILLER = {"a", "an", "the", "of", "on", "for", "in", "to", "and", "again", "once", "more"}
_SAME_WORD = {"renew": "rotate", "review": "audit", "update": "upgrade", "tidy": "clean",
              "remove": "delete", "check": "verify", "certs": "certificates"}  # fmt: skip


def owner(workstream_id: object) -> str:
    """The person who owns a workstream (and decides its items)."""
    return next((p for p, owned in OWNERS.items() if workstream_id in owned), "mia")


def same_task(one: str, other: str) -> bool:
    """Two titles that name the same task in other words."""
    return _words(one) == _words(other)


def _words(title: str) -> tuple[str, ...]:
    found = re.findall(r"[a-z0-9]+", title.casefold())
    return tuple(_SAME_WORD.get(w, w) for w in found if w not in _FILLER)


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Seen:
    """What a person reads of the hub when they decide: tasks, events, and people's words."""

    tasks: dict[str, dict[str, Any]]
    events: dict[str, dict[str, Any]]
    words: Words
    now: datetime

    @classmethod
    def of(cls, summary: dict[str, Any], words: Words, now: datetime) -> Seen:
        """The hub's summary, read as a person reads it."""
        tasks = {t["id"]: t for ws in summary["workstreams"] for t in ws["tasks"]}
        events = {e["id"]: e for e in summary["recent_events"]}
        return cls(tasks, events, words, now)


def decide(
    operation: str, params: dict[str, Any], summary: dict[str, Any], words: Words, now: datetime
) -> Verdict:
    """The deciding owner's verdict on one proposal, on the hub as `summary` shows it."""
    return judge(operation, params, Seen.of(summary, words, now))


def judge(operation: str, params: dict[str, Any], seen: Seen) -> Verdict:
    """The deciding owner's verdict on one proposal, by the rules above."""
    if operation in STATUS_WRITES:
        task = seen.tasks.get(str(params.get("task_id")))
        if task is not None:
            return _status(task, str(params.get("status")), params, seen)
    if operation == "create_task":
        return _create(params, seen)
    return Verdict(True, owner(params.get("workstream_id")))


def _status(task: dict[str, Any], status: str, params: dict[str, Any], seen: Seen) -> Verdict:
    by = owner(task["workstream_id"])
    cited = [seen.events[e] for e in params.get("evidence") or [] if e in seen.events]
    held = _owner_set(task, by, seen) if status in ("blocked", "cancelled") else None
    if held is not None:
        lifted = any(
            e["source"] == by and e["event_type"] in ("blocker", "note") and _at(e["created_at"])
            > held.at for e in cited
        )  # fmt: skip
        if not lifted:
            return Verdict(
                False,
                by,
                f"{by} set it {held.status} on {held.at:%m-%d}; that stands",
                "an owner's word",
            )
    if status == "cancelled":
        return _cancel(task, by, seen)
    if status == "blocked":
        return _blocked(task, by, cited)
    return Verdict(True, by)


def _owner_set(task: dict[str, Any], by: str, seen: Seen) -> Any:
    sets = [
        w
        for w in seen.words.on(task["id"])
        if w.kind == "set" and w.by == by and w.at > seen.now - OWNER_HOLDS and w.at < seen.now
    ]
    return sets[-1] if sets else None


def _cancel(task: dict[str, Any], by: str, seen: Seen) -> Verdict:
    if by == "mia":
        return Verdict(
            False, by, "cancelling is the owner's call: we close work by shipping it", "cancel"
        )
    idle = seen.now - _at(task["updated_at"]) >= IDLE
    if task["status"] == "todo" and idle:
        return Verdict(True, by)
    return Verdict(False, by, "it is under way; ask whoever works on it", "cancel under way")


def _blocked(task: dict[str, Any], by: str, cited: list[dict[str, Any]]) -> Verdict:
    theirs = [e for e in cited if e.get("task_id") == task["id"] and e["source"] != OWN_SOURCE]
    if not theirs:
        return Verdict(
            False, by, "cites no word of the team that it is blocked", "blocked, no word"
        )
    newer = [e for e in theirs if _at(e["created_at"]) > _at(task["updated_at"])]
    if not newer:
        return Verdict(
            False,
            by,
            f"cites {theirs[0]['id']}, older than the task's last change",
            "blocked, older word",
        )
    if by == "omar" and not any(e["event_type"] == "blocker" for e in newer):
        return Verdict(False, by, "a note is not a blocker", "blocked on a note")
    return Verdict(True, by)


def _create(params: dict[str, Any], seen: Seen) -> Verdict:
    ws = params.get("workstream_id")
    by = owner(ws)
    title = str(params.get("title", ""))
    for task in sorted(seen.tasks.values(), key=lambda t: str(t["id"])):
        if (
            task["workstream_id"] == ws
            and task["status"] in OPEN
            and same_task(task["title"], title)
        ):
            return Verdict(False, by, f"duplicates {task['id']} '{task['title']}'", "duplicate")
    return Verdict(True, by)
