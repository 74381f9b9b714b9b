"""Why a person is still asked: each item they judged, with the facts that could tell it apart.

`--why` prints it for the arm with levers. Each decided item is kept with what the runtime could
observe when it was asked and a person can read in a grant's scope: the operation and the status
it sets, the workstream (the task's, or the `workstream_id` param) and its owner on the hub, the
task's status and how many whole days since its last change, and what the proposal cites (a
person's event newer than the task's last change, and its kind and author; an older one; none),
the workstream's status, and who wrote the task's newest event of a person and of what kind.
Per class (operation and status) the table shows, for each fact, how many of each value were
approved and rejected, and marks a fact whose values part the approvals from the rejections.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from month_kit import OWN_SOURCE

# The facts a decided item is read by, in the order the table prints them.
FACTS = ("owner", "workstream", "ws status", "task status", "idle days", "cites", "cited by",
         "last by", "last kind", "decided by")  # fmt: skip


@dataclass(frozen=True)
class Decided:
    """One item a person judged, and the facts it was judged on."""

    operation: str
    status: str
    approved: bool
    why: str  # the rule that rejected it, or "" when approved
    facts: Mapping[str, str]

    @property
    def cls(self) -> str:
        """Its class: the operation and the status it sets."""
        return f"{self.operation} {self.status}".strip()


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def decided(
    operation: str,
    params: Mapping[str, Any],
    summary: Mapping[str, Any],
    now: datetime,
    verdict: tuple[bool, str, str],
) -> Decided:
    """One judged item, read against the hub as the person saw it (`verdict`: approved, by, why)."""
    approved, by, why = verdict
    tasks = {t["id"]: t for ws in summary.get("workstreams", []) for t in ws["tasks"]}
    owners = {ws["id"]: str(ws.get("owner") or "-") for ws in summary.get("workstreams", [])}
    states = {ws["id"]: str(ws.get("status") or "-") for ws in summary.get("workstreams", [])}
    events = {e["id"]: e for e in summary.get("recent_events", [])}
    task = tasks.get(str(params.get("task_id")))
    ws = str(task["workstream_id"] if task else params.get("workstream_id") or "-")
    facts = {"owner": owners.get(ws, "-"), "workstream": ws, "ws status": states.get(ws, "-")}
    facts["decided by"] = by
    if task is not None:
        idle = (now - _at(task["updated_at"])).days
        facts |= {"task status": task["status"], "idle days": _bucket(idle)}
        facts |= _cites(params, task, events)
        words = [e for e in events.values() if e.get("task_id") == task["id"]
                 and e["source"] != OWN_SOURCE]  # fmt: skip
        last = max(words, key=lambda e: str(e["created_at"]), default=None)
        if last is not None:
            facts |= {"last by": str(last["source"]), "last kind": str(last["event_type"])}
    status = str(params.get("status") or "")
    return Decided(operation, status, approved, why, facts)


def _bucket(days: int) -> str:
    for edge in (1, 3, 7, 14, 30):
        if days < edge:
            return f"<{edge}"
    return ">=30"


def _cites(
    params: Mapping[str, Any], task: Mapping[str, Any], events: Mapping[str, Any]
) -> dict[str, str]:
    ids = [e for e in params.get("evidence") or [] if isinstance(e, str)]
    if not ids:
        return {"cites": "none", "cited by": "-"}
    found = [events[i] for i in ids if i in events and events[i].get("task_id") == task["id"]]
    people = [e for e in found if e["source"] != OWN_SOURCE]
    if not people:
        return {"cites": "unseen or Custodian's", "cited by": "-"}
    newest = max(people, key=lambda e: str(e["created_at"]))
    newer = _at(newest["created_at"]) > _at(task["updated_at"])
    kind = f"{'newer' if newer else 'older'} {newest['event_type']}"
    return {"cites": kind, "cited by": str(newest["source"])}


def _split(items: Iterable[Decided], fact: str) -> tuple[dict[str, Counter[str]], bool]:
    """Per value of `fact`: approved and rejected; and whether some value holds only approvals
    (two or more) while another holds rejections: the fact parts them."""
    by: dict[str, Counter[str]] = {}
    for item in items:
        value = item.facts.get(fact, "-")
        by.setdefault(value, Counter())["approved" if item.approved else "rejected"] += 1
    clean = any(c["approved"] >= 2 and not c["rejected"] for c in by.values())
    mixed = any(c["rejected"] for c in by.values())
    return by, clean and mixed


def print_why(items: list[Decided]) -> None:
    """The breakdown: per class, its decisions, the rejections by rule, each fact's split."""
    print("    why still asked     (per class: approved/rejected by each fact; * parts them)")
    classes: dict[str, list[Decided]] = {}
    for item in items:
        classes.setdefault(item.cls, []).append(item)
    for cls, inside in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        yes = sum(i.approved for i in inside)
        print(f"      {cls}: {len(inside)} judged, {yes} approved, {len(inside) - yes} rejected")
        rules = Counter(i.why for i in inside if not i.approved)
        for why, n in rules.most_common():
            print(f"        {n:4}  rejected: {why}")
        if yes == len(inside) or yes == 0:
            continue
        for fact in FACTS:
            by, parts = _split(inside, fact)
            cells = ", ".join(f"{v} {c['approved']}/{c['rejected']}" for v, c in sorted(by.items()))
            print(f"        {'*' if parts else ' '} {fact:12} {cells}")
