"""The Redmine backend: the state-hub contract answered from a Redmine's REST API.

`redmine+http://API-KEY@host:port` names it. A domain is a project; workstreams, tasks, flags
and decisions are issues of four trackers; events are journal notes (docs/trackers.md has the
mapping and what it stands in for). Each write is made once: its mark is looked for in what
Redmine keeps before it is sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from custodian_runtime.core.contract import (
    TASK_STATUSES,
    WORKSTREAM_STATUSES,
    DecisionResolution,
    FlagResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.core.trackers import redmine as rm
from custodian_runtime.statehub.backends import Backend
from custodian_runtime.statehub.backends._gateway import Gateway, Refused, Reply
from custodian_runtime.statehub.backends._redmine_rest import Auth, RedmineRest, Schema
from custodian_runtime.statehub.backends._roundup_writes import Mark
from custodian_runtime.statehub.backends.roundup import _REVISION, _Call, _if_match

IssueRead = dict[str, Any]  # an issue as read, before it is mapped
SUBJECT = 255  # Redmine's longest subject


class RedmineBackend(Backend):
    """A Redmine with the trackers, statuses and field docs/trackers.md names."""

    name = "redmine"
    stand_ins = rm.STAND_INS

    def transport(self, url: str, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        """The contract answered from the Redmine at `url`, reached through `inner`."""
        return RedmineGateway(url, inner)


@dataclass(frozen=True)
class RedmineProject:
    """A project's issues of each kind, each with its journals."""

    name: str
    workstreams: list[IssueRead]
    tasks: list[IssueRead]
    flags: list[IssueRead]
    decisions: list[IssueRead]

    @property
    def revision(self) -> int:
        """The domain's revision (core/trackers/redmine.py says how it stands in)."""
        return rm.revision([*self.workstreams, *self.tasks, *self.flags, *self.decisions])

    def events(self) -> list[dict[str, Any]]:
        """The domain's events (journal notes on its workstreams and tasks), newest first."""
        found = [
            rm.event(j, rm.contract_id("w", ws["id"]), None)
            for ws in self.workstreams
            for j in rm.events_of(ws)
        ]
        for task in self.tasks:
            parent = rm.contract_id("w", (task.get("parent") or {}).get("id"))
            task_id = rm.contract_id("t", task["id"])
            found += [rm.event(j, parent, task_id) for j in rm.events_of(task)]
        return sorted(found, key=lambda e: (e["created_at"], int(e["id"][1:])), reverse=True)


class RedmineGateway(Gateway):
    """Answers the contract's requests from one Redmine."""

    _rest: RedmineRest

    unmappable = (ValueError,)  # an issue of a status the mapping does not know

    def _open_rest(self, url: str, inner: httpx.BaseTransport) -> RedmineRest:
        return RedmineRest(url, inner)

    def _answer(self, request: httpx.Request, path: str, auth: Auth) -> Reply:
        for pattern, handlers in _ROUTES:
            found = pattern.fullmatch(path)
            if found is None:
                continue
            handler = handlers.get(request.method)
            if handler is None:
                raise Refused(
                    405,
                    f"{request.method} {path} is not part of the contract",
                    "method_not_allowed",
                )
            return handler(self, _Call(request, path, auth, found.groups()))
        raise Refused(404, f"no such endpoint: {path}")

    def _now(self) -> str:
        return self._clock().strftime("%Y-%m-%dT%H:%M:%SZ")

    # --- what Redmine holds ---------------------------------------------------------------------

    def _domain(self, auth: Auth, name: str, *, needed: bool = True) -> RedmineProject | None:
        schema = self._rest.schema(auth)
        if self._rest.project(name, auth) is None:
            if needed:
                raise Refused(404, f"no domain named {name!r} (no project of that identifier)")
            return None
        listed = self._rest.issues(auth, project_id=name, subproject_id="!*")
        by_kind: dict[str, list[IssueRead]] = {k.prefix: [] for k in rm.KINDS}
        for item in listed:
            kind = schema.kind_of(item)
            if kind is not None:
                by_kind[kind.prefix].append(self._rest.issue(str(item["id"]), auth))
        if not by_kind["w"]:
            if needed:
                raise Refused(404, f"no domain named {name!r} (it has no workstream)")
            return None
        return RedmineProject(name, by_kind["w"], by_kind["t"], by_kind["f"], by_kind["d"])

    def _domains(self, auth: Auth) -> list[RedmineProject]:
        found = (
            self._domain(auth, p["identifier"], needed=False) for p in self._rest.projects(auth)
        )
        return sorted((d for d in found if d is not None), key=lambda d: d.name)

    def _of_kind(
        self, auth: Auth, kind: rm.IssueKind, contract: str | None, noun: str
    ) -> IssueRead:
        number = rm.number_in(kind.prefix, contract)
        if number is None:
            raise Refused(404, f"no {noun} with id {contract!r}")
        issue = self._rest.issue(number, auth)
        if self._rest.schema(auth).kind_of(issue) is not kind:
            raise Refused(404, f"no {noun} with id {contract!r}")
        return issue

    # --- reads ---------------------------------------------------------------------------------

    def health(self, call: _Call) -> Reply:
        self._rest.get("/users/current.json", call.auth)
        return 200, {"status": "ok", "version": "redmine-rest", "hub_id": rm.hub_id(self._url)}, {}

    def state(self, call: _Call) -> Reply:
        domains = [_overview(d, self._rest.schema(call.auth)) for d in self._domains(call.auth)]
        return (
            200,
            {"generated_at": self._now(), "hub_id": rm.hub_id(self._url), "domains": domains},
            {},
        )

    def domain(self, call: _Call) -> Reply:
        events = call.number("events", 50, 500)
        domain = self._domain(call.auth, call.args[0])
        assert domain is not None
        field = self._rest.schema(call.auth).field
        tag = {"ETag": f'"{domain.revision}"'}
        asked = _REVISION.fullmatch(call.request.headers.get("if-none-match", ""))
        if asked is not None and int(asked.group(1)) == domain.revision:
            return 304, None, tag
        tasks: dict[str, list[dict[str, Any]]] = {}
        for issue in domain.tasks:
            tasks.setdefault(str((issue.get("parent") or {}).get("id")), []).append(
                rm.task(issue, field)
            )
        flags = [rm.flag(i, field) for i in domain.flags]
        decisions = [rm.decision(i, field, domain.name) for i in domain.decisions]
        summary = {
            "domain": domain.name,
            "revision": domain.revision,
            "generated_at": self._now(),
            "workstreams": [
                {**rm.workstream(i, field, domain.name), "tasks": tasks.get(str(i["id"]), [])}
                for i in domain.workstreams
            ],
            "open_decisions": [d for d in decisions if d["status"] == "open"],
            "open_flags": [f for f in flags if f["status"] == "open"],
            "recent_events": domain.events()[:events],
        }
        return 200, summary, tag

    def task(self, call: _Call) -> Reply:
        issue = self._of_kind(call.auth, rm.TASK, call.args[0], "task")
        task = rm.task(issue, self._rest.schema(call.auth).field)
        return 200, task, {"ETag": f'"{task["version"]}"'}

    def events(self, call: _Call) -> Reply:
        limit = call.number("limit", 100, 1000)
        name = call.query("domain")
        domains = (
            self._domains(call.auth)
            if name is None
            else [self._domain(call.auth, name, needed=False)]
        )
        found = [e for d in domains if d is not None for e in d.events()]
        workstream, task = call.query("workstream_id"), call.query("task_id")
        found = [
            e
            for e in found
            if (workstream is None or e["workstream_id"] == workstream)
            and (task is None or e["task_id"] == task)
        ]
        found.sort(key=lambda e: (e["created_at"], int(e["id"][1:])), reverse=True)
        return 200, {"events": found[:limit]}, {}

    def _listed(self, call: _Call, kind: rm.IssueKind) -> list[tuple[IssueRead, str]]:
        name = call.query("domain")
        domains = (
            self._domains(call.auth)
            if name is None
            else [self._domain(call.auth, name, needed=False)]
        )
        group = {"w": "workstreams", "f": "flags", "d": "decisions"}[kind.prefix]
        return [(i, d.name) for d in domains if d is not None for i in getattr(d, group)]

    def flags(self, call: _Call) -> Reply:
        field, status = self._rest.schema(call.auth).field, call.query("status")
        found = [rm.flag(i, field) for i, _ in self._listed(call, rm.FLAG)]
        return 200, {"flags": [f for f in found if status is None or f["status"] == status]}, {}

    def decisions(self, call: _Call) -> Reply:
        field, status = self._rest.schema(call.auth).field, call.query("status")
        found = [rm.decision(i, field, name) for i, name in self._listed(call, rm.DECISION)]
        return 200, {"decisions": [d for d in found if status is None or d["status"] == status]}, {}

    def workstreams(self, call: _Call) -> Reply:
        field = self._rest.schema(call.auth).field
        found = [rm.workstream(i, field, name) for i, name in self._listed(call, rm.WORKSTREAM)]
        return 200, {"workstreams": found}, {}

    # --- writes --------------------------------------------------------------------------------

    def _create(
        self,
        call: _Call,
        kind: rm.IssueKind,
        project: str,
        values: dict[str, Any],
        data: dict[str, Any],
        shape: Callable[[IssueRead], dict[str, Any]],
    ) -> Reply:
        schema, mark = self._rest.schema(call.auth), call.mark()
        if mark is not None:
            where = {f"cf_{schema.field}": f"~{mark.key}", "tracker_id": schema.tracker(kind)}
            for listed in self._rest.issues(call.auth, **where):
                found = self._rest.issue(str(listed["id"]), call.auth)
                if rm.mark_digest(rm.extra(found, schema.field), mark.key) is not None:
                    return _replay(found, rm.extra(found, schema.field), mark, shape, 201)
            data = rm.with_mark(data, mark.key, mark.digest)
        if self._rest.project(project, call.auth) is None:
            self._rest.create_project(project, [schema.tracker(k) for k in rm.KINDS], call.auth)
        sent = {
            **values,
            "project_id": project,
            "tracker_id": schema.tracker(kind),
            "custom_fields": [{"id": schema.field, "value": rm.field_text(data)}],
        }
        number = self._rest.create_issue(sent, call.auth)
        return 201, shape(self._rest.issue(number, call.auth)), {}

    def _status_id(self, call: _Call, kind: rm.IssueKind, status: str) -> int:
        return self._rest.schema(call.auth).statuses[kind.statuses[status]]

    def create_workstream(self, call: _Call) -> Reply:
        body = call.body(NewWorkstream)
        status = body.status or "active"
        values = {"subject": body.title, "status_id": self._status_id(call, rm.WORKSTREAM, status)}
        field = self._rest.schema(call.auth).field
        shape = lambda i: rm.workstream(i, field, body.domain)  # noqa: E731
        return self._create(call, rm.WORKSTREAM, body.domain, values, {"owner": body.owner}, shape)

    def create_task(self, call: _Call) -> Reply:
        body = call.body(NewTask)
        ws = self._of_kind(call.auth, rm.WORKSTREAM, body.workstream_id, "workstream")
        values = {
            "subject": body.title,
            "description": body.description or "",
            "status_id": self._status_id(call, rm.TASK, body.status or "todo"),
            "parent_issue_id": ws["id"],
            "due_date": None if body.due is None else body.due.isoformat(),
        }
        field = self._rest.schema(call.auth).field
        project = ws["project"]["id"]
        data = {"assignee": body.assignee}
        return self._create(call, rm.TASK, project, values, data, lambda i: rm.task(i, field))

    def create_decision(self, call: _Call) -> Reply:
        body = call.body(NewDecision)
        if body.workstream_id is not None:
            self._of_kind(call.auth, rm.WORKSTREAM, body.workstream_id, "workstream")
        values = {"subject": body.title, "description": body.context or ""}
        data = {"workstream_id": body.workstream_id, "options": list(body.options or ())}
        field = self._rest.schema(call.auth).field
        shape = lambda i: rm.decision(i, field, body.domain)  # noqa: E731
        return self._create(call, rm.DECISION, body.domain, values, data, shape)

    def add_flag(self, call: _Call) -> Reply:
        body = call.body(NewFlag)
        task = (
            None
            if body.task_id is None
            else self._of_kind(call.auth, rm.TASK, body.task_id, "task")
        )
        workstream_id = body.workstream_id
        task_parent = (
            None if task is None else rm.contract_id("w", (task.get("parent") or {}).get("id"))
        )
        workstream_id = workstream_id or task_parent
        ws = self._of_kind(call.auth, rm.WORKSTREAM, workstream_id, "workstream")
        if task is not None and task_parent != workstream_id:
            raise Refused(422, f"task {body.task_id!r} is not in workstream {workstream_id!r}")
        values = {"subject": _subject(body.note), "description": body.note}
        data = {
            "workstream_id": workstream_id,
            "task_id": body.task_id,
            "raised_by": body.raised_by,
        }
        field = self._rest.schema(call.auth).field
        return self._create(
            call, rm.FLAG, ws["project"]["id"], values, data, lambda i: rm.flag(i, field)
        )

    def add_event(self, call: _Call) -> Reply:
        body, mark = call.body(NewEvent), call.mark()
        ws = self._of_kind(call.auth, rm.WORKSTREAM, body.workstream_id, "workstream")
        target, task_id = ws, None
        if body.task_id is not None:
            target = self._of_kind(call.auth, rm.TASK, body.task_id, "task")
            if rm.contract_id("w", (target.get("parent") or {}).get("id")) != body.workstream_id:
                raise Refused(
                    422, f"task {body.task_id!r} is not in workstream {body.workstream_id!r}"
                )
            task_id = body.task_id
        if mark is not None:
            found = _marked_note(target, mark.key)
            if found is not None:
                if rm.note_meta(str(found.get("notes")))[1].get("mark") != [mark.key, mark.digest]:
                    raise _mismatch(mark)
                return 201, rm.event(found, body.workstream_id, task_id), _REPLAYED
        pair = None if mark is None else (mark.key, mark.digest)
        text = rm.note_text(body.summary, body.event_type, body.source, pair)
        self._rest.update_issue(str(target["id"]), {"notes": text}, call.auth)
        after = self._rest.issue(str(target["id"]), call.auth)
        made = next(j for j in reversed(rm.events_of(after)) if j.get("notes") == text)
        return 201, rm.event(made, body.workstream_id, task_id), {}

    def _change(
        self,
        call: _Call,
        issue: IssueRead,
        values: dict[str, Any],
        data: dict[str, Any],
        check: Callable[[IssueRead], None],
        shape: Callable[[IssueRead], dict[str, Any]],
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        field, mark = self._rest.schema(call.auth).field, call.mark()
        now = rm.extra(issue, field)
        if mark is not None and rm.mark_digest(now, mark.key) is not None:
            return _replay(issue, now, mark, shape, 200)
        check(issue)
        kept = {**now, **data}
        kept = kept if mark is None else rm.with_mark(kept, mark.key, mark.digest)
        sent = {**values, "custom_fields": [{"id": field, "value": rm.field_text(kept)}]}
        self._rest.update_issue(str(issue["id"]), sent, call.auth)
        return 200, shape(self._rest.issue(str(issue["id"]), call.auth)), {}

    def update_task(self, call: _Call) -> Reply:
        body = call.body(TaskStatusUpdate)
        if_match = _if_match(call.request.headers.get("if-match"))
        issue = self._of_kind(call.auth, rm.TASK, call.args[0], "task")
        field = self._rest.schema(call.auth).field

        def check(item: IssueRead) -> None:
            if if_match is not None and rm.version(item) != if_match:
                raise Refused(
                    412,
                    f"task {call.args[0]!r} is at version {rm.version(item)}, not {if_match}",
                    "precondition_failed",
                    extra={"current": rm.task(item, field)},
                )

        values = {"status_id": self._status_id(call, rm.TASK, body.status)}
        status, task, headers = self._change(
            call, issue, values, {}, check, lambda i: rm.task(i, field)
        )
        return status, task, {**headers, "ETag": f'"{task["version"]}"'}

    def resolve_flag(self, call: _Call) -> Reply:
        call.body(FlagResolution)
        issue = self._of_kind(call.auth, rm.FLAG, call.args[0], "flag")
        field = self._rest.schema(call.auth).field
        values = {"status_id": self._status_id(call, rm.FLAG, "resolved")}
        check = _open(rm.FLAG, "flag", call.args[0])
        return self._change(call, issue, values, {}, check, lambda i: rm.flag(i, field))

    def resolve_decision(self, call: _Call) -> Reply:
        body = call.body(DecisionResolution)
        issue = self._of_kind(call.auth, rm.DECISION, call.args[0], "decision")
        field = self._rest.schema(call.auth).field
        project = issue["project"]["id"]
        name = self._project_identifier(call.auth, project)
        values = {"status_id": self._status_id(call, rm.DECISION, "resolved")}
        check = _open(rm.DECISION, "decision", call.args[0])
        shape = lambda i: rm.decision(i, field, name)  # noqa: E731
        return self._change(call, issue, values, {"resolution": body.resolution}, check, shape)

    def _project_identifier(self, auth: Auth, project: object) -> str:
        found = self._rest.get(f"/projects/{project}.json", auth)["project"]
        return str(found["identifier"])


_REPLAYED = {"Idempotent-Replayed": "true"}


def _subject(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(flag)"
    return line if len(line) <= SUBJECT else line[: SUBJECT - 1] + "…"


def _mismatch(mark: Mark) -> Refused:
    return Refused(
        422, f"idempotency key {mark.key!r} was used with another body", "idempotency_mismatch"
    )


def _replay(
    issue: IssueRead,
    data: Mapping[str, Any],
    mark: Mark,
    shape: Callable[[IssueRead], dict[str, Any]],
    status: int,
) -> tuple[int, dict[str, Any], dict[str, str]]:
    if rm.mark_digest(data, mark.key) != mark.digest:
        raise _mismatch(mark)
    return status, shape(issue), dict(_REPLAYED)


def _marked_note(issue: IssueRead, key: str) -> Mapping[str, Any] | None:
    for journal in rm.events_of(issue):
        meta = rm.note_meta(str(journal.get("notes")))[1]
        if isinstance(meta.get("mark"), list) and meta["mark"][:1] == [key]:
            return journal
    return None


def _open(kind: rm.IssueKind, noun: str, contract: str) -> Callable[[IssueRead], None]:
    def check(issue: IssueRead) -> None:
        if rm.status_of(kind, str((issue.get("status") or {}).get("name"))) == "resolved":
            raise Refused(409, f"{noun} {contract!r} is resolved already")

    return check


def _overview(domain: RedmineProject, schema: Schema) -> dict[str, Any]:
    ws = Counter(rm.status_of(rm.WORKSTREAM, i["status"]["name"]) for i in domain.workstreams)
    tasks = Counter(rm.status_of(rm.TASK, i["status"]["name"]) for i in domain.tasks)
    events = domain.events()
    return {
        "domain": domain.name,
        "revision": domain.revision,
        "workstreams": {status: ws[status] for status in WORKSTREAM_STATUSES},
        "tasks": {status: tasks[status] for status in TASK_STATUSES},
        "open_flags": sum(i["status"]["name"] == rm.FLAG.statuses["open"] for i in domain.flags),
        "open_decisions": sum(
            i["status"]["name"] == rm.DECISION.statuses["open"] for i in domain.decisions
        ),
        "last_event_at": events[0]["created_at"] if events else None,
    }


G = RedmineGateway
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
_ROUTES = tuple((__import__("re").compile(pattern), handlers) for pattern, handlers in _TABLE)

BACKEND = RedmineBackend()
