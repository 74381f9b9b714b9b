"""The contract's reads, answered from a Roundup tracker: each returns the contract's JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.contract import TASK_STATUSES, WORKSTREAM_STATUSES
from custodian_runtime.core.trackers import roundup as rd
from custodian_runtime.statehub.backends._gateway import Refused
from custodian_runtime.statehub.backends._roundup_rest import RoundupRest

Auth = Mapping[str, str]


@dataclass(frozen=True)
class Domain:
    """What the tracker holds of one domain, as Roundup items."""

    name: str
    workstreams: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    flags: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    recent: list[dict[str, Any]]  # the newest progress events asked for, newest first
    events: int  # how many progress events the domain has

    @property
    def revision(self) -> int:
        """The domain's revision (core/trackers/roundup.py says how it stands in)."""
        return rd.revision(self.workstreams, self.tasks, self.flags, self.decisions, self.events)


def read_domain(rest: RoundupRest, auth: Auth, name: str, events: int) -> Domain:
    """Every workstream, task, flag and decision of `name`, its `events` newest events and how
    many it has: five tracker requests."""
    workstreams = rest.items(rd.WORKSTREAM, auth, {"domain:": name})
    if not workstreams:
        raise Refused(404, f"no domain named {name!r} (a domain exists once it has a workstream)")
    ids = ",".join(str(item["id"]) for item in workstreams)
    recent, total = newest_events(rest, auth, ids, events)
    return Domain(
        name,
        workstreams,
        rest.items(rd.TASK, auth, {"workstream": ids}),
        rest.items(rd.FLAG, auth, {"workstream": ids}),
        rest.items(rd.DECISION, auth, {"domain:": name}),
        recent,
        total,
    )


def newest_events(
    rest: RoundupRest, auth: Auth, workstreams: str | None, limit: int, **where: str
) -> tuple[list[dict[str, Any]], int]:
    """The newest `limit` events of those workstreams (None: all), newest first, and how many
    there are, in one request."""
    params = where if workstreams is None else {"workstream": workstreams, **where}
    return rest.first(rd.EVENT, auth, {**params, "@sort": "-creation,-id"}, limit)


def domain_summary(rest: RoundupRest, auth: Auth, name: str, events: int, now: str) -> Any:
    """GET /domains/{domain}/summary, with the domain's revision (for its ETag)."""
    domain = read_domain(rest, auth, name, events)
    tasks: dict[str, list[dict[str, Any]]] = {}
    for item in domain.tasks:
        tasks.setdefault(str(rd.number_of(item.get("workstream"))), []).append(rd.task(item))
    return {
        "domain": name,
        "revision": domain.revision,
        "generated_at": now,
        "workstreams": [
            {**rd.workstream(item), "tasks": tasks.get(str(item["id"]), [])}
            for item in domain.workstreams
        ],
        "open_decisions": [rd.decision(i) for i in domain.decisions if i.get("status") == "open"],
        "open_flags": [rd.flag(i) for i in domain.flags if i.get("status") == "open"],
        "recent_events": [rd.event(item) for item in domain.recent],
    }


def state_summary(rest: RoundupRest, auth: Auth, hub_id: str, now: str) -> dict[str, Any]:
    """GET /state/summary: each domain's counts and revision, by name; four tracker requests
    for the whole tracker and one more a domain (its newest event and its number of events)."""
    workstreams = rest.items(rd.WORKSTREAM, auth)
    domain_of = {str(item["id"]): str(item.get("domain")) for item in workstreams}

    def of(item: Mapping[str, Any]) -> str | None:
        return domain_of.get(str(rd.number_of(item.get("workstream"))))

    tasks, flags = rest.items(rd.TASK, auth), rest.items(rd.FLAG, auth)
    decisions = rest.items(rd.DECISION, auth)
    domains = []
    for name in sorted(set(domain_of.values())):
        own = [item for item in workstreams if item.get("domain") == name]
        ids = ",".join(str(item["id"]) for item in own)
        recent, total = newest_events(rest, auth, ids, 1)
        domain = Domain(
            name,
            own,
            [item for item in tasks if of(item) == name],
            [item for item in flags if of(item) == name],
            [item for item in decisions if item.get("domain") == name],
            recent,
            total,
        )
        domains.append(_overview(domain))
    return {"generated_at": now, "hub_id": hub_id, "domains": domains}


def _overview(domain: Domain) -> dict[str, Any]:
    ws = Counter(str(item.get("status")) for item in domain.workstreams)
    tasks = Counter(str(item.get("status")) for item in domain.tasks)
    last = rd.stamp(domain.recent[0], "created_at", "creation") if domain.recent else None
    return {
        "domain": domain.name,
        "revision": domain.revision,
        "workstreams": {status: ws[status] for status in WORKSTREAM_STATUSES},
        "tasks": {status: tasks[status] for status in TASK_STATUSES},
        "open_flags": sum(item.get("status") == "open" for item in domain.flags),
        "open_decisions": sum(item.get("status") == "open" for item in domain.decisions),
        "last_event_at": last,
    }


def workstream_ids(rest: RoundupRest, auth: Auth, domain: str | None) -> str | None:
    """The Roundup numbers of a domain's workstreams, comma-separated (None: every domain;
    "": a domain with none)."""
    if domain is None:
        return None
    items = rest.items(rd.WORKSTREAM, auth, {"domain:": domain})
    return ",".join(str(item["id"]) for item in items)  # "": a domain of no workstream


def list_of(
    rest: RoundupRest, auth: Auth, kind: rd.Kind, domain: str | None, status: str | None
) -> list[dict[str, Any]]:
    """The flags or decisions of a domain (or all), of one status (or all), oldest first."""
    where: dict[str, str] = {} if status is None else {"status:": status}
    if kind is rd.DECISION:
        where = where if domain is None else {**where, "domain:": domain}
    else:
        ids = workstream_ids(rest, auth, domain)
        if ids == "":
            return []
        where = where if ids is None else {**where, "workstream": ids}
    return rest.items(kind, auth, where)
