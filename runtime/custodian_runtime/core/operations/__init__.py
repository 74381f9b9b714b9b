"""The operations registry: every write the model may propose, one spec each, in one order.

Everything that used to be kept by hand per operation (the plan schema's sets, the plan's
sections, the caps and budgets, the authority's checks, what a person reads before and after,
the dispatch tables, the system prompt's sections and list) is read from here. `register()`
adds an operation for as long as its context lasts, which is how a test proves that a new
operation needs nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError

from custodian_runtime.core.operations import (
    add_progress_event,
    create_task,
    create_workstream,
    flag_for_human,
    record_decision,
    resolve_decision,
    resolve_flag,
    set_task_status,
    update_task_status,
    write_canon,
)
from custodian_runtime.core.operations._common import SANCTIONED_STATUSES
from custodian_runtime.core.operations._spec import (
    Landing,
    Lookup,
    OperationSpec,
)
from custodian_runtime.core.operations.schema import describe as describe_error
from custodian_runtime.core.view import OWN_SOURCE

__all__ = [
    "OWN_SOURCE",
    "SANCTIONED_STATUSES",
    "Landing",
    "Lookup",
    "OperationSpec",
    "all_specs",
    "describe",
    "done",
    "find",
    "names",
    "normalize",
    "of_section",
    "register",
    "spec",
    "status_writes",
]

_BUILT_IN: tuple[OperationSpec, ...] = tuple(
    module.SPEC
    for module in (
        add_progress_event,
        update_task_status,
        flag_for_human,
        set_task_status,
        create_workstream,
        create_task,
        record_decision,
        resolve_decision,
        resolve_flag,
        write_canon,
    )
)
_registry: dict[str, OperationSpec] = {s.name: s for s in _BUILT_IN}


def all_specs() -> tuple[OperationSpec, ...]:
    """Every registered operation, sanctioned first, in the order the prompt lists them."""
    return tuple(_registry.values())


def names(default: str | None = None) -> frozenset[str]:
    """The registered names; only the `sanctioned` or `approvable` ones when `default` says."""
    return frozenset(s.name for s in _registry.values() if default in (None, s.default))


def find(name: object) -> OperationSpec | None:
    """The spec of `name`, or None for an operation Custodian does not know."""
    return _registry.get(name) if isinstance(name, str) else None


def spec(name: str) -> OperationSpec:
    """The spec of `name`; an unknown name is an error that lists the known ones."""
    found = find(name)
    if found is None:
        known = ", ".join(sorted(_registry))
        raise KeyError(f"{name!r} is not an operation Custodian knows; known: {known}")
    return found


@contextmanager
def register(extra: OperationSpec) -> Iterator[OperationSpec]:
    """Register `extra` while the context lasts (for tests); its name must be new."""
    if extra.name in _registry:
        raise ValueError(f"{extra.name} is already registered; choose another name")
    _registry[extra.name] = extra
    try:
        yield extra
    finally:
        del _registry[extra.name]


def of_section(section: str) -> tuple[OperationSpec, ...]:
    """The operations the model writes in plan section `section`."""
    return tuple(s for s in _registry.values() if s.section == section)


def status_writes() -> frozenset[str]:
    """The operations that set a task's status (sent only on the task as observed)."""
    return frozenset(s.name for s in _registry.values() if s.status_write)


def normalize(operation: str, params: Any) -> tuple[str, dict[str, Any]]:
    """Validate `params` against the operation's schema; return the routed operation and params.

    A status change to anything but done/in_progress is routed to `set_task_status` (a proposal
    for a person). Unknown operations keep their params as given. Raises ValueError.
    """
    if not isinstance(params, dict):
        raise ValueError(f"params must be a JSON object, not {_json_type(params)}")
    found = find(operation)
    if found is None:
        return operation, dict(params)
    try:
        model = found.params.model_validate(params)
    except ValidationError as exc:
        raise ValueError(describe_error(exc)) from None
    normal = model.model_dump(mode="json", exclude_none=True)
    routed = found.route(normal) if found.route is not None else None
    return (routed or operation), normal


def describe(operation: str, params: Mapping[str, Any], titles: Lookup) -> str:
    """The one sentence a person reads for a proposed write, with titles (review page, notes)."""
    found = find(operation)
    if found is None:
        return f"Run {operation}, an operation Custodian does not know"
    try:
        return found.describe(params, titles)
    except (KeyError, TypeError):  # params a person edited or an older item: still readable
        return f"{operation} on {', '.join(str(v) for v in params.values())[:80]}"


def done(operation: str, params: Mapping[str, Any], titles: Lookup) -> str:
    """The sentence a person reads once the write is made, in the past tense (the review page's
    flash): `created task ‘Add a sitemap’ under workstream web-ws-1 ‘Relaunch’ in website`."""
    found = find(operation)
    if found is not None and found.done is not None:
        try:
            return found.done(params, titles)
        except (KeyError, TypeError):  # params a person edited or an older item: still readable
            pass
    pairs = ", ".join(f"{k}={str(v)[:40]}" for k, v in params.items()) or "no params"
    where = f" in {titles.domain}" if titles.domain else ""
    return f"carried out {operation} ({pairs}){where}"


def _json_type(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")
