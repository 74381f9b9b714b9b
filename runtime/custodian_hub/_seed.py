"""Seeding a hub database from a dataset: the JSON shape of `custodian hub serve --seed FILE`.

A dataset is one JSON object with up to five lists of complete records, ids and timestamps
included (the shape `GET` answers use)::

    {"workstreams": [{"id", "domain", "title", "status", "owner"?, "created_at", "updated_at"?}],
     "tasks":       [{"id", "workstream_id", "title", "description"?, "status", "assignee"?,
                      "due"?, "created_at", "updated_at"?, "version"? (default 1)}],
     "decisions":   [{"id", "domain", "workstream_id"?, "title", "context"?, "options"?, "status",
                      "resolution"?, "created_at", "resolved_at"?}],
     "events":      [{"id", "workstream_id", "task_id"?, "event_type", "summary", "source",
                      "created_at"}],
     "flags":       [{"id", "workstream_id", "task_id"?, "note", "status", "raised_by",
                      "created_at", "resolved_at"?}]}

Unknown keys are refused; references must resolve. A seed loads only into an empty database, so
seeding an existing database again changes nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from custodian_hub._store import Store, bump_revision, is_empty
from custodian_hub._wire import db_date, db_timestamp
from custodian_hub._writes import insert
from custodian_runtime.core.contract import (
    DomainName,
    EventType,
    FlagStatus,
    Id,
    LongText,
    ShortText,
    TaskStatus,
    Title,
    WorkstreamStatus,
)
from custodian_runtime.errors import ConfigError

Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
OptionalName = Annotated[str, StringConstraints(max_length=200)] | None


class SeedError(ConfigError):
    """A seed dataset or file cannot be loaded; the message names the record and the problem."""

    def __init__(self, message: str) -> None:
        super().__init__(message, setting="--seed")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Workstream(_Record):
    id: Id
    domain: DomainName
    title: Title
    status: WorkstreamStatus
    owner: OptionalName = None
    created_at: datetime
    updated_at: datetime | None = None


class _Task(_Record):
    id: Id
    workstream_id: Id
    title: Title
    description: LongText = ""
    status: TaskStatus
    assignee: OptionalName = None
    due: date | None = None
    created_at: datetime
    updated_at: datetime | None = None
    version: Annotated[int, Field(ge=1, le=2**53)] = 1


class _Resolvable(_Record):
    status: Literal["open", "resolved"]
    resolved_at: datetime | None = None

    @model_validator(mode="after")
    def _resolved_has_a_time(self) -> _Resolvable:
        if (self.status == "resolved") != (self.resolved_at is not None):
            raise ValueError("resolved_at is required when status is 'resolved', and only then")
        return self


class _Decision(_Resolvable):
    id: Id
    domain: DomainName
    workstream_id: Id | None = None
    title: Title
    context: LongText = ""
    options: tuple[Name, ...] = ()
    resolution: ShortText | None = None
    created_at: datetime


class _Event(_Record):
    id: Id
    workstream_id: Id
    task_id: Id | None = None
    event_type: EventType
    summary: ShortText
    source: Name
    created_at: datetime


class _Flag(_Resolvable):
    id: Id
    workstream_id: Id
    task_id: Id | None = None
    note: ShortText
    status: FlagStatus
    raised_by: Name
    created_at: datetime


class _Dataset(_Record):
    workstreams: tuple[_Workstream, ...] = ()
    tasks: tuple[_Task, ...] = ()
    decisions: tuple[_Decision, ...] = ()
    events: tuple[_Event, ...] = ()
    flags: tuple[_Flag, ...] = ()


def read_seed_file(path: Path) -> dict[str, Any]:
    """The dataset in a seed file, or a `SeedError` that says what is wrong with the file."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SeedError(f"seed file {path} does not exist; pass 'demo' or a JSON file") from exc
    except (OSError, UnicodeError) as exc:
        raise SeedError(f"seed file {path} cannot be read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SeedError(f"seed file {path} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SeedError(f"seed file {path} must contain one JSON object with lists of records")
    return value


def load_seed(db_path: Path, dataset: Mapping[str, Any]) -> bool:
    """Validate `dataset` and load it into the hub database; False (nothing done) if not empty."""
    parsed = _parse(dataset)
    _check_references(parsed)
    store = Store(Path(db_path))
    try:
        with store.write() as conn:
            if not is_empty(conn):
                return False
            for table, rows in _rows(parsed):
                for row in rows:
                    insert(conn, table, row)
            for domain in sorted({ws.domain for ws in parsed.workstreams}):
                bump_revision(conn, domain)  # seeding is each domain's first change (v1.2)
        return True
    finally:
        store.close()


def _parse(dataset: Mapping[str, Any]) -> _Dataset:
    try:
        return _Dataset.model_validate(dataset)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'dataset'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:10]
        ]
        raise SeedError("seed data is invalid: " + "; ".join(problems)) from exc


def _check_references(data: _Dataset) -> None:
    for kind in ("workstreams", "tasks", "decisions", "events", "flags"):
        counts = Counter(record.id for record in getattr(data, kind))
        duplicates = sorted(item_id for item_id, n in counts.items() if n > 1)
        if duplicates:
            raise SeedError(f"seed data: {kind} repeat the ids {', '.join(duplicates)}")
    workstreams = {ws.id: ws for ws in data.workstreams}
    tasks = {task.id: task for task in data.tasks}
    for i, task in enumerate(data.tasks):
        _known(workstreams, task.workstream_id, f"tasks[{i}].workstream_id")
    linked: tuple[tuple[str, tuple[_Event | _Flag, ...]], ...] = (
        ("events", data.events),
        ("flags", data.flags),
    )
    for kind, items in linked:
        for i, item in enumerate(items):
            _known(workstreams, item.workstream_id, f"{kind}[{i}].workstream_id")
            if item.task_id is None:
                continue
            task = _known(tasks, item.task_id, f"{kind}[{i}].task_id")
            if task.workstream_id != item.workstream_id:
                raise SeedError(
                    f"seed data: {kind}[{i}]: task {item.task_id!r} is not in "
                    f"workstream {item.workstream_id!r}"
                )
    _check_decisions(data, workstreams)


def _check_decisions(data: _Dataset, workstreams: Mapping[str, _Workstream]) -> None:
    domains = {ws.domain for ws in data.workstreams}
    for i, decision in enumerate(data.decisions):
        if decision.domain not in domains:
            raise SeedError(
                f"seed data: decisions[{i}].domain: no workstream in domain {decision.domain!r}"
            )
        if decision.workstream_id is not None:
            ws = _known(workstreams, decision.workstream_id, f"decisions[{i}].workstream_id")
            if ws.domain != decision.domain:
                raise SeedError(
                    f"seed data: decisions[{i}]: workstream {ws.id!r} is in domain {ws.domain!r}"
                )


def _known(index: Mapping[str, Any], item_id: str, where: str) -> Any:
    if item_id not in index:
        raise SeedError(f"seed data: {where}: no record with id {item_id!r}")
    return index[item_id]


def _ts(value: datetime | None) -> str | None:
    return None if value is None else db_timestamp(value)


def _rows(data: _Dataset) -> list[tuple[str, list[dict[str, Any]]]]:
    def stamped(record: _Record) -> dict[str, Any]:
        row = record.model_dump()
        for key in ("created_at", "updated_at", "resolved_at"):
            if key in row:
                row[key] = _ts(row[key])
        if "updated_at" in row and row["updated_at"] is None:
            row["updated_at"] = row["created_at"]
        return row

    tasks = [{**stamped(t), "due": db_date(t.due)} for t in data.tasks]
    decisions = [
        {**stamped(d), "options": json.dumps(list(d.options), ensure_ascii=False)}
        for d in data.decisions
    ]
    return [
        ("workstreams", [stamped(ws) for ws in data.workstreams]),
        ("tasks", tasks),
        ("decisions", decisions),
        ("events", [stamped(e) for e in data.events]),
        ("flags", [stamped(f) for f in data.flags]),
    ]


def validate_seed(dataset: Mapping[str, Any]) -> None:
    """Check a dataset as `load_seed` would, without a database; a `SeedError` says why."""
    _check_references(_parse(dataset))
