"""The action plan: extract_plan(markdown) -> Plan, every entry kept as a ProposedItem.

The plan is the one fenced block whose info string is exactly `json` (any case, blanks around it
ignored): ```json or ~~~json. Fences follow CommonMark (see core/_fences.py), so a ```json line
inside another fenced block is content, not a second plan. No such block, more than one, one that
is never closed, invalid JSON, duplicate keys, nesting deeper than MAX_DEPTH or a top level that
is not an object raise PlanRejected; so do more than `max_items` entries (Limits.max_plan_items)
and text that is not valid Unicode (a lone surrogate, raw or as a `\ud800` escape). Inside a
usable plan, each entry is validated on its own: a malformed entry becomes an item with `error`
set and the others go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

import custodian_runtime.core.operations as operations
from custodian_runtime.core._fences import Fence, find_fences
from custodian_runtime.core.digest import canonical_json, digest
from custodian_runtime.core.limits import DEFAULT
from custodian_runtime.core.operations import OperationSpec, normalize
from custodian_runtime.core.operations.schema import ProposalEntry, Reason, describe, short
from custodian_runtime.core.plan._json import MAX_DEPTH, parse_plan_object, require_unicode
from custodian_runtime.errors import PlanRejected

__all__ = [
    "MAX_DEPTH",
    "PROSE",
    "Plan",
    "ProposedItem",
    "extract_plan",
    "fingerprint",
]

PROPOSALS = "proposals"
PROSE = "prose"  # a structured answer's field for the prose for people (core/plan/answer.py)
# The target of an operation Custodian does not know, for display: the first of these it has.
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
        spec = operations.find(self.operation)
        for key in spec.targets if spec is not None else _TARGET_KEYS:
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


def extract_plan(
    markdown: str, max_items: int = DEFAULT.max_plan_items, *, bare: bool = False
) -> Plan:
    """Find the one ```json block in `markdown` and turn it into a Plan, or raise PlanRejected.

    With `bare` (the answer was asked for in a JSON schema), an answer that is one JSON object
    and no fence is the plan itself, its prose in the `prose` field.
    """
    require_unicode(markdown, "The answer")
    if bare and markdown.lstrip().startswith("{"):
        document = parse_plan_object(markdown)
        prose = document.pop(PROSE, "")
        if not isinstance(prose, str):
            raise PlanRejected(f"The answer's {PROSE!r} field must be a string of Markdown.")
        return _plan(document, prose.strip(), markdown, max_items)
    lines = markdown.splitlines()
    block = _the_json_block(lines, find_fences(lines))
    document = parse_plan_object(block.body)
    before = "\n".join(lines[: block.first_line]).strip()
    after = "\n".join(lines[block.end_line :]).strip()
    prose = "\n\n".join(part for part in (before, after) if part)
    return _plan(document, prose, block.body, max_items)


def _plan(document: dict[str, Any], prose: str, raw: str, max_items: int) -> Plan:
    """The Plan of a parsed plan object: each entry an item, valid or not."""
    _require_at_most(document, max_items)
    require_unicode(canonical_json(document), "The ```json block")
    builder = _Builder()
    observations: list[str] = []
    for key, value in document.items():
        if key == "observations":
            observations.extend(builder.observations(value))
        else:
            builder.section(key, value)
    return Plan(prose, tuple(observations), tuple(builder.items), raw)


def _require_at_most(document: dict[str, Any], max_items: int) -> None:
    """Refuse a plan of more than `max_items` entries before any of them is built or journaled."""
    count = sum(_entries(key, value) for key, value in document.items())
    if count > max_items:
        raise PlanRejected(
            f"The ```json block contains {count} items, more than the {max_items} one plan may "
            "contain (CUSTODIAN_MAX_PLAN_ITEMS): propose the most important ones; the rest can "
            "wait for the next run."
        )


def _entries(key: str, value: Any) -> int:
    """How many ProposedItems a top-level key becomes, as _Builder makes them."""
    if key == "observations":
        return 0 if value is None or isinstance(value, list) else 1
    if key not in sections():
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
            f"The answer contains no ```json block{hint}: put the action plan in exactly one "
            "fenced block that opens with ```json and closes with ```."
        )
    if len(blocks) > 1:
        where = ", ".join(str(fence.first_line + 1) for fence in blocks)
        raise PlanRejected(
            f"The answer contains {len(blocks)} ```json blocks (opening on lines {where}): "
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
        if key not in sections():
            self.unknown_key(key, value)
            return
        if value is None:
            return
        if not isinstance(value, list):
            self.add(key, _guess_operation(key, value), value, None, _not_a_list(key, value))
            return
        for entry in value:
            if key == PROPOSALS:
                self.proposal(key, entry)
            else:
                self.entry(key, _section_spec(key), entry)

    def entry(self, section: str, spec: OperationSpec, raw: Any) -> None:
        try:
            model = entry_model(spec.params).model_validate(raw)
        except ValidationError as exc:
            self.add(section, _guess_operation(section, raw), raw, None, describe(exc))
            return
        params = model.model_dump(mode="json", exclude_none=True)
        reason = params.pop("reason", None)
        routed = spec.route(params) if spec.route is not None else None
        self.add(section, routed or spec.name, params, reason, None)

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
        # Kept as an item the authority denies, so the note shows it; never queued for a person.
        known = ", ".join(("observations", *sections()))
        error = (
            f"{short(key)} is not a plan section ({known}); a write for a person goes in "
            f"{PROPOSALS} as {{operation, params, rationale}}"
        )
        self.add(key, key, {"value": value}, None, error)


def _reason(entry: ProposalEntry) -> str | None:
    given = [text for text in (entry.reason, entry.rationale) if text]
    return " — ".join(given) or None


def _not_a_list(key: str, value: Any) -> str:
    return f"the section {key!r} must be a JSON array of objects, not {type(value).__name__}"


def _guess_operation(section: str, raw: Any) -> str:
    """The operation a malformed entry most likely meant, so its trace reads sensibly."""
    if section != PROPOSALS and section in sections():
        spec = _section_spec(section)
        status = raw.get("status") if isinstance(raw, dict) else None
        if not isinstance(status, str) or spec.route is None:
            return spec.name
        return spec.route({"status": status}) or spec.name
    named = raw.get("operation") if isinstance(raw, dict) else None
    if isinstance(named, str) and 0 < len(named) <= 64:
        return named
    return section


def sections() -> tuple[str, ...]:
    """The plan's sections of writes, in the registry's order, `proposals` last."""
    own = dict.fromkeys(s.section for s in operations.all_specs() if s.section != PROPOSALS)
    return (*own, PROPOSALS)


def _section_spec(section: str) -> OperationSpec:
    """The one operation the model writes in `section` (every section but `proposals`)."""
    (spec,) = operations.of_section(section)
    return spec


@cache
def entry_model(params: type[BaseModel]) -> type[BaseModel]:
    """An operation's params as a plan entry: the same fields, and an optional `reason`."""
    name = params.__name__ + "Entry"
    model: type[BaseModel] = create_model(name, __base__=params, reason=(Reason | None, None))
    return model
