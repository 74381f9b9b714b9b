"""The Roundup backend: the state-hub contract answered from a Roundup tracker's REST API.

`roundup+http://user:password@host:port/tracker` names it. The client speaks the contract as to
any hub; this transport answers each request from the tracker (docs/trackers.md has the mapping
and what it stands in for). The tracker runs the schema in `_data/roundup/`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from pydantic import ValidationError

from custodian_runtime.core.contract import (
    DecisionResolution,
    FlagResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.trackers import roundup as rd
from custodian_runtime.statehub.backends import Backend
from custodian_runtime.statehub.backends import _roundup_reads as reads
from custodian_runtime.statehub.backends import _roundup_writes as writes
from custodian_runtime.statehub.backends._gateway import Gateway, Refused, Reply
from custodian_runtime.statehub.backends._roundup_rest import RoundupRest

M = Any  # a request model of the contract
_REVISION = re.compile(r'^\s*(?:W/)?"?([0-9]{1,18})"?\s*$')


class RoundupBackend(Backend):
    """A Roundup tracker with Custodian's schema (`_data/roundup/`)."""

    name = "roundup"
    stand_ins = rd.STAND_INS

    def transport(self, url: str, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        """The contract answered from the tracker at `url`, reached through `inner`."""
        return RoundupGateway(url, inner)


class RoundupGateway(Gateway):
    """Answers the contract's requests from one Roundup tracker."""

    _rest: RoundupRest

    def _open_rest(self, url: str, inner: httpx.BaseTransport) -> RoundupRest:
        return RoundupRest(url, inner)

    def _answer(self, request: httpx.Request, path: str, auth: Mapping[str, str]) -> Reply:
        method = request.method
        for pattern, handlers in _ROUTES:
            found = pattern.fullmatch(path)
            if found is None:
                continue
            handler = handlers.get(method)
            if handler is None:
                raise Refused(
                    405, f"{method} {path} is not part of the contract", "method_not_allowed"
                )
            return handler(self, _Call(request, path, auth, found.groups()))
        raise Refused(404, f"no such endpoint: {path}")

    def _now(self) -> str:
        return self._clock().strftime("%Y-%m-%dT%H:%M:%SZ")

    # --- reads ---------------------------------------------------------------------------------

    def health(self, call: _Call) -> Reply:
        root = self._rest.root(call.auth)
        version = f"roundup-rest/{root.get('default_version', '?')}"
        return 200, {"status": "ok", "version": version, "hub_id": self._hub_id(root)}, {}

    def state(self, call: _Call) -> Reply:
        hub_id = self._hub_id(self._rest.root(call.auth))
        return 200, reads.state_summary(self._rest, call.auth, hub_id, self._now()), {}

    def _hub_id(self, root: Mapping[str, Any]) -> str:
        found = rd.tracker_id(root)
        if found is None:
            raise Refused(
                503, f"{self._url}/rest names no tracker: is it a Roundup tracker?", "unavailable"
            )
        return found

    def domain(self, call: _Call) -> Reply:
        events = call.number("events", 50, 500)
        summary = reads.domain_summary(self._rest, call.auth, call.args[0], events, self._now())
        tag = {"ETag": f'"{summary["revision"]}"'}
        asked = _REVISION.fullmatch(call.request.headers.get("if-none-match", ""))
        if asked is not None and int(asked.group(1)) == summary["revision"]:
            return 304, None, tag
        return 200, summary, tag

    def task(self, call: _Call) -> Reply:
        number = rd.roundup_id(rd.TASK, call.args[0])
        if number is None:
            raise Refused(404, f"no task with id {call.args[0]!r}")
        item, _ = self._rest.item(rd.TASK, number, call.auth)
        task = rd.task(item)
        return 200, task, {"ETag": f'"{task["version"]}"'}

    def events(self, call: _Call) -> Reply:
        limit = call.number("limit", 100, 1000)
        ids = reads.workstream_ids(self._rest, call.auth, call.query("domain"))
        ids = _narrowed(ids, rd.WORKSTREAM, call.query("workstream_id"))
        task = _narrowed(None, rd.TASK, call.query("task_id"))
        if ids == "" or task == "":  # an id of no such item, or of none in the domain
            return 200, {"events": []}, {}
        where = {} if task is None else {"task": task}
        found, _ = reads.newest_events(self._rest, call.auth, ids, limit, **where)
        return 200, {"events": [rd.event(item) for item in found]}, {}

    def flags(self, call: _Call) -> Reply:
        found = reads.list_of(
            self._rest, call.auth, rd.FLAG, call.query("domain"), call.query("status")
        )
        return 200, {"flags": [rd.flag(item) for item in found]}, {}

    def decisions(self, call: _Call) -> Reply:
        domain, status = call.query("domain"), call.query("status")
        found = reads.list_of(self._rest, call.auth, rd.DECISION, domain, status)
        return 200, {"decisions": [rd.decision(item) for item in found]}, {}

    def workstreams(self, call: _Call) -> Reply:
        domain = call.query("domain")
        where = {} if domain is None else {"domain:": domain}
        found = self._rest.items(rd.WORKSTREAM, call.auth, where)
        return 200, {"workstreams": [rd.workstream(item) for item in found]}, {}

    # --- writes --------------------------------------------------------------------------------

    def add_event(self, call: _Call) -> Reply:
        return _made(writes.add_event(self._rest, call.auth, call.body(NewEvent), call.mark()))

    def add_flag(self, call: _Call) -> Reply:
        return _made(writes.add_flag(self._rest, call.auth, call.body(NewFlag), call.mark()))

    def create_workstream(self, call: _Call) -> Reply:
        body = call.body(NewWorkstream)
        return _made(writes.create_workstream(self._rest, call.auth, body, call.mark()))

    def create_task(self, call: _Call) -> Reply:
        return _made(writes.create_task(self._rest, call.auth, call.body(NewTask), call.mark()))

    def create_decision(self, call: _Call) -> Reply:
        body = call.body(NewDecision)
        return _made(writes.create_decision(self._rest, call.auth, body, call.mark()))

    def update_task(self, call: _Call) -> Reply:
        body = call.body(TaskStatusUpdate)
        if_match = _if_match(call.request.headers.get("if-match"))
        made = writes.update_task_status(
            self._rest, call.auth, call.args[0], body, call.mark(), if_match
        )
        return _made(made, {"ETag": f'"{made[1]["version"]}"'})

    def resolve_flag(self, call: _Call) -> Reply:
        call.body(FlagResolution)
        return _made(writes.resolve_flag(self._rest, call.auth, call.args[0], call.mark()))

    def resolve_decision(self, call: _Call) -> Reply:
        body = call.body(DecisionResolution)
        made = writes.resolve_decision(self._rest, call.auth, call.args[0], body, call.mark())
        return _made(made)


class _Call:
    """One request as a handler reads it: its query, body, mark and the path's ids."""

    def __init__(
        self, request: httpx.Request, path: str, auth: Mapping[str, str], args: tuple[str, ...]
    ) -> None:
        self.request, self.path, self.auth, self.args = request, path, auth, args
        self._content = request.read()

    def query(self, name: str) -> str | None:
        value: str | None = self.request.url.params.get(name)
        return value

    def number(self, name: str, default: int, most: int) -> int:
        text = self.query(name)
        if text is None:
            return default
        if not text.isdigit() or int(text) > most:
            raise Refused(400, f"{name} must be a whole number from 0 to {most}, not {text!r}")
        return int(text)

    def body(self, model: type[M]) -> M:
        try:
            return model.model_validate_json(self._content)
        except ValidationError as exc:
            raise Refused(422, f"the request body is not valid: {exc.errors()[0]['msg']}") from None

    def mark(self) -> writes.Mark | None:
        key = self.request.headers.get("idempotency-key")
        if key is None:
            return None
        what = b"\n".join((self.request.method.encode(), self.path.encode(), self._content))
        return writes.Mark(key, sha256_hex(what))


def _narrowed(numbers: str | None, kind: rd.Kind, contract_id: str | None) -> str | None:
    """Item numbers (comma-separated; None: any) narrowed to the one `contract_id` names; ""
    when that names no item of `kind`, or one outside `numbers`."""
    if contract_id is None:
        return numbers
    number = rd.roundup_id(kind, contract_id)
    if number is None or (numbers is not None and number not in numbers.split(",")):
        return ""
    return number


def _made(made: writes.Made, headers: Mapping[str, str] | None = None) -> Reply:
    status, resource, replayed = made
    extra = {"Idempotent-Replayed": "true"} if replayed else {}
    return status, resource, {**(headers or {}), **extra}


def _if_match(value: str | None) -> int | None:
    if value is None:
        return None
    found = _REVISION.fullmatch(value)
    if found is None:
        raise Refused(400, f'If-Match must name a task version, as "3": {value!r}')
    return int(found.group(1))


G = RoundupGateway
_ID = r"([A-Za-z0-9._:-]{1,64})"
Handler = Callable[[G, _Call], Reply]
_TABLE: tuple[tuple[str, dict[str, Handler]], ...] = (
    (r"/health", {"GET": G.health}),
    (r"/state/summary", {"GET": G.state}),
    (r"/domains/([a-z0-9][a-z0-9-]{0,62})/summary", {"GET": G.domain}),
    (rf"/tasks/{_ID}", {"GET": G.task, "PATCH": G.update_task}),
    (r"/tasks", {"POST": G.create_task}),
    (r"/events", {"GET": G.events, "POST": G.add_event}),
    (r"/flags", {"GET": G.flags, "POST": G.add_flag}),
    (rf"/flags/{_ID}", {"PATCH": G.resolve_flag}),
    (r"/decisions", {"GET": G.decisions, "POST": G.create_decision}),
    (rf"/decisions/{_ID}/resolve", {"POST": G.resolve_decision}),
    (r"/workstreams", {"GET": G.workstreams, "POST": G.create_workstream}),
)
_ROUTES = tuple((re.compile(pattern), handlers) for pattern, handlers in _TABLE)

BACKEND = RoundupBackend()
