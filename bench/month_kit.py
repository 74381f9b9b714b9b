"""What every simulated month shares: a world's shape, and the record of what people said.

A world (bench/month_world.py, bench/relay_world.py) is a seeded domain, a scripted model, a
team that acts on the hub each morning and the one class of writes the person rejects. The
people's words are kept here as they are made (`Words`): the hub keeps no history of a task, and
the audit (bench/month_audit.py) needs to know what a person set, approved, rejected or wrote, and
when, to tell an override or a question asked again from what a newer word allowed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

# Custodian's own events carry this source (core/view.py OWN_SOURCE); every other is a person's.
OWN_SOURCE = "custodian"


class SimClock:
    """The month's clock: set to a moment, and a millisecond later at each reading."""

    def __init__(self, now: datetime) -> None:
        self._now = now
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            self._now += timedelta(milliseconds=1)
            return self._now

    def set(self, moment: datetime) -> None:
        """Move the clock to `moment` (never back)."""
        with self._lock:
            self._now = max(self._now, moment)

    def peek(self) -> datetime:
        """The clock's reading, without moving it."""
        with self._lock:
            return self._now


@dataclass(frozen=True)
class Word:
    """One word of a person: a status set, approved or rejected on a task, or an event written."""

    at: datetime
    kind: str  # "set" (on the hub or by an approval), "rejected", "event"
    task_id: str | None
    workstream_id: str | None = None
    status: str | None = None
    by: str = "ana"
    event_id: str | None = None


@dataclass
class Words:
    """Every word people said in one arm's month, in order."""

    said: list[Word] = field(default_factory=list)
    reversals: int = 0  # a person set back a status Custodian wrote on its own

    def on(self, task_id: str) -> list[Word]:
        """The words on one task, oldest first."""
        return [w for w in self.said if w.task_id == task_id]


@dataclass
class Hands:
    """A person's hands on the hub: each write is made over HTTP and kept as a `Word`."""

    http: httpx.Client
    domain: str
    clock: SimClock
    words: Words

    def summary(self) -> dict[str, Any]:
        """The domain as the hub answers it."""
        response = self.http.get(f"/domains/{self.domain}/summary", params={"events": 200})
        response.raise_for_status()
        return dict(response.json())

    def tasks(self) -> list[dict[str, Any]]:
        """Every task of the domain."""
        return [t for ws in self.summary()["workstreams"] for t in ws["tasks"]]

    def set_status(self, task: dict[str, Any], status: str, by: str) -> None:
        """Set a task's status on the hub, as a person."""
        response = self.http.patch(f"/tasks/{task['id']}", json={"status": status})
        response.raise_for_status()
        self.words.said.append(
            Word(self.clock.peek(), "set", task["id"], task["workstream_id"], status, by)
        )

    def post(self, task: dict[str, Any], event_type: str, summary: str, by: str) -> str:
        """Write a person's event on a task; its id."""
        body = {
            "workstream_id": task["workstream_id"],
            "task_id": task["id"],
            "event_type": event_type,
            "summary": summary,
            "source": by,
        }
        response = self.http.post("/events", json=body)
        response.raise_for_status()
        event_id = str(response.json()["id"])
        self.words.said.append(
            Word(self.clock.peek(), "event", task["id"], task["workstream_id"], by=by,
                 event_id=event_id)
        )  # fmt: skip
        return event_id


@dataclass(frozen=True)
class Verdict:
    """A person's decision on one item: approve or not, who decides, and why."""

    approve: bool
    by: str
    reason: str = ""
    rule: str = ""  # which written rule rejected it, in a few words
    # The one who decides it is away: it stays pending (the verdict is theirs, for later).
    waits: bool = False


# A world's people, deciding one item: (operation, params, the hub's summary, words, now).
Judge = Callable[[str, dict[str, Any], dict[str, Any], Words, datetime], Verdict]


@dataclass(frozen=True)
class World:
    """One simulated month's world: domain, seed, scripted model, team and harmful class."""

    name: str
    domain: str
    start: datetime
    seed: Callable[[], dict[str, Any]]
    # The scripted model's answer for a day: (summary, day, seed, words) -> the answer's text.
    answer: Callable[[dict[str, Any], int, int, Words], str]
    harmful: Callable[[str, dict[str, Any]], bool]
    # The team's morning on the hub: (hands, morning, seeded blocked ids, writes landed so far).
    team: Callable[[Hands, datetime, set[str], list[Any]], None]
    # How many harmful writes the hub's final tasks show: (tasks, the seed's task ids).
    harmed: Callable[[list[dict[str, Any]], set[str]], int]
    reject_reason: str
    describe: str
    # The people who decide, by written rules (bench/ops_people.py); None: one person who
    # rejects `harmful` with `reject_reason` and approves the rest (bench/month_person.py).
    judge: Judge | None = None
