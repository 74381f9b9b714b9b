"""The action plan: extract_plan(markdown) -> Plan, every entry kept as a ProposedItem.

The plan is the one fenced block whose info string is exactly `json` (any case, blanks around it
ignored): ```json or ~~~json. Fences follow CommonMark (see core/_fences.py), so a ```json line
inside another fenced block is content, not a second plan. No such block, more than one, one that
is never closed, invalid JSON, duplicate keys, nesting deeper than MAX_DEPTH or a top level that
is not an object raise PlanRejected; so do more than `max_items` entries (Policy.max_plan_items)
and text that is not valid Unicode (a lone surrogate, raw or as a `\ud800` escape). Inside a
usable plan, each entry is validated on its own: a malformed entry becomes an item with `error`
set and the others go on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from custodian_runtime.core._fences import Fence, find_fences
from custodian_runtime.core._plan_json import MAX_DEPTH, parse_plan_object, require_unicode
from custodian_runtime.core.digest import canonical_json, digest
from custodian_runtime.core.plan_schema import (
    APPROVABLE_OPERATIONS,
    OPERATION_PATTERN,
    SANCTIONED_OPERATIONS,
    SANCTIONED_STATUSES,
    EventEntry,
    FlagEntry,
    ProposalEntry,
    StatusEntry,
    describe,
    normalize,
    short,
)
from custodian_runtime.core.policy import DEFAULT
from custodian_runtime.errors import PlanRejected

__all__ = [
    "APPROVABLE_OPERATIONS",
    "MAX_DEPTH",
    "SANCTIONED_OPERATIONS",
    "Plan",
    "ProposedItem",
    "extract_plan",
    "fingerprint",
]

SECTIONS = ("observations", "progress_events", "tasks_to_update", "tasks_to_flag", "proposals")
_TARGET_KEYS = ("task_id", "decision_id", "flag_id", "path", "workstream_id", "domain")


def fingerprint(operation: str, params: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of {"operation", "params"}: the item's identity."""
    return digest({"operation": operation, "params": params})


@dataclass(frozen=True)
class ProposedItem:
    """One thing the model proposed, valid or not, in plan order."""

    index: int
    section: str
    operation: str
    params: dict[str, Any]
    reason: str | None
    error: str | None
    fingerprint: str

    @property
    def target(self) -> str | None:
        """The main id or path the item is about, for display."""
        for key in _TARGET_KEYS:
            value = self.params.get(key)
            if isinstance(value, str):
                return value
        return None


@dataclass(frozen=True)
class Plan:
    """The prose around the block, the model's observations and every proposed item."""

    prose: str
    observations: tuple[str, ...]
    items: tuple[ProposedItem, ...]
    raw_json: str


def extract_plan(markdown: str, max_items: int = DEFAULT.max_plan_items) -> Plan:
    """Find the one ```json block in `markdown` and turn it into a Plan, or raise PlanRejected."""
    require_unicode(markdown, "The answer")
    lines = markdown.splitlines()
    block = _the_json_block(lines, find_fences(lines))
    document = parse_plan_object(block.body)
    _require_at_most(document, max_items)
    require_unicode(canonical_json(document), "The ```json block")
    before = "\n".join(lines[: block.first_line]).strip()
    after = "\n".join(lines[block.end_line :]).strip()
    prose = "\n\n".join(part for part in (before, after) if part)
    builder = _Builder()
    observations: list[str] = []
    for key, value in document.items():
        if key == "observations":
            observations.extend(builder.observations(value))
        else:
            builder.section(key, value)
    return Plan(prose, tuple(observations), tuple(builder.items), block.body)


def _require_at_most(document: dict[str, Any], max_items: int) -> None:
    """Refuse a plan of more than `max_items` entries before any of them is built or journaled."""
    count = sum(_entries(key, value) for key, value in document.items())
    if count > max_items:
        raise PlanRejected(
            f"The ```json block holds {count} items, more than the {max_items} one plan may "
            "hold (CUSTODIAN_MAX_PLAN_ITEMS): propose the most important ones; the rest can "
            "wait for the next run."
        )


def _entries(key: str, value: Any) -> int:
    """How many ProposedItems a top-level key becomes, as _Builder makes them."""
    if key == "observations":
        return 0 if value is None or isinstance(value, list) else 1
    if key not in _HANDLERS:
        return 1
    if value is None:
        return 0
    return len(value) if isinstance(value, list) else 1


def _the_json_block(lines: list[str], fences: list[Fence]) -> Fence:
    blocks = [fence for fence in fences if fence.language == "json"]
    if not blocks:
        hint = ""
        unclosed = [fence for fence in fences if not fence.closed]
        if unclosed:
            hint = f" (the fence opened on line {unclosed[0].first_line + 1} is never closed)"
        raise PlanRejected(
            f"The answer holds no ```json block{hint}: put the action plan in exactly one fenced "
            "block that opens with ```json and closes with ```."
        )
    if len(blocks) > 1:
        where = ", ".join(str(fence.first_line + 1) for fence in blocks)
        raise PlanRejected(
            f"The answer holds {len(blocks)} ```json blocks (opening on lines {where}): "
            "put the whole action plan in exactly one ```json block."
        )
    if not blocks[0].closed:
        raise PlanRejected(
            f"The ```json block opened on line {blocks[0].first_line + 1} is never closed: "
            "end it with a line of ``` (the answer may have been cut off)."
        )
    return blocks[0]


class _Builder:
    """Turns sections into ProposedItems, numbering them in plan order."""

    def __init__(self) -> None:
        self.items: list[ProposedItem] = []

    def add(
        self, section: str, operation: str, params: Any, reason: str | None, error: str | None
    ) -> None:
        params = params if isinstance(params, dict) else {"value": params}
        item = ProposedItem(
            len(self.items),
            section,
            operation,
            params,
            reason,
            error,
            fingerprint(operation, params),
        )
        self.items.append(item)

    def observations(self, value: Any) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(
                "observations", "observations", value, None, _not_a_list("observations", value)
            )
            return []
        return [entry if isinstance(entry, str) else canonical_json(entry) for entry in value]

    def section(self, key: str, value: Any) -> None:
        handler = _HANDLERS.get(key)
        if handler is None:
            self.unknown_key(key, value)
            return
        if value is None:
            return
        if not isinstance(value, list):
            self.add(key, _guess_operation(key, value), value, None, _not_a_list(key, value))
            return
        for entry in value:
            handler(self, key, entry)

    def entry(self, section: str, schema: type[BaseModel], raw: Any, operation: str) -> None:
        try:
            model = schema.model_validate(raw)
        except ValidationError as exc:
            self.add(section, _guess_operation(section, raw), raw, None, describe(exc))
            return
        params = model.model_dump(mode="json", exclude_none=True)
        reason = params.pop("reason", None)
        if operation == "update_task_status" and params["status"] not in SANCTIONED_STATUSES:
            operation = "set_task_status"
        self.add(section, operation, params, reason, None)

    def proposal(self, section: str, raw: Any) -> None:
        try:
            entry = ProposalEntry.model_validate(raw)
            operation, params = normalize(entry.operation, entry.params)
        except ValidationError as exc:
            self.add(section, _guess_operation(section, raw), raw, None, describe(exc))
            return
        except ValueError as exc:
            self.add(section, entry.operation, entry.params, _reason(entry), f"params: {exc}")
            return
        self.add(section, operation, params, _reason(entry), None)

    def unknown_key(self, key: str, value: Any) -> None:
        # Kept as a proposal for a person rather than dropped: the model meant something by it.
        params = {"value": value}
        if re.fullmatch(OPERATION_PATTERN, key) is None:
            sections = ", ".join(SECTIONS)
            error = f"{short(key)} is neither a plan section ({sections}) nor an operation name"
            self.add(key, key, params, None, error)
            return
        try:
            operation, normal = normalize(key, params)
        except ValueError as exc:
            self.add(key, key, params, None, f"params: {exc}")
            return
        self.add(key, operation, normal, None, None)


def _reason(entry: ProposalEntry) -> str | None:
    given = [text for text in (entry.reason, entry.rationale) if text]
    return " — ".join(given) or None


def _not_a_list(key: str, value: Any) -> str:
    return f"the section {key!r} must be a JSON array of objects, not {type(value).__name__}"


def _guess_operation(section: str, raw: Any) -> str:
    """The operation a malformed entry most likely meant, so its trace reads sensibly."""
    if section == "tasks_to_update":
        status = raw.get("status") if isinstance(raw, dict) else None
        return (
            "set_task_status"
            if isinstance(status, str) and status not in SANCTIONED_STATUSES
            else "update_task_status"
        )
    fixed = {"progress_events": "add_progress_event", "tasks_to_flag": "flag_for_human"}
    if section in fixed:
        return fixed[section]
    named = raw.get("operation") if isinstance(raw, dict) else None
    if isinstance(named, str) and 0 < len(named) <= 64:
        return named
    return section


_Handler = Callable[[_Builder, str, Any], None]
_HANDLERS: dict[str, _Handler] = {
    "progress_events": lambda b, s, raw: b.entry(s, EventEntry, raw, "add_progress_event"),
    "tasks_to_update": lambda b, s, raw: b.entry(s, StatusEntry, raw, "update_task_status"),
    "tasks_to_flag": lambda b, s, raw: b.entry(s, FlagEntry, raw, "flag_for_human"),
    "proposals": lambda b, s, raw: b.proposal(s, raw),
}
