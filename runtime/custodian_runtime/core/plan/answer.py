"""The answer's shape as one JSON schema, built from the plan's own models, for structured output.

A provider that constrains its decoding to a schema is sent this one (each in its own field, in
its own file under llm/): a JSON object with the prose for people in `prose`, then the plan's
sections, each entry the operation's params model (core/operations/schema.py) with its
`reason`. Ids are limited to the observed ones where there are any and not too many (`enum`).
Each list is bounded (`maxItems`): the observations at MAX_OBSERVATIONS, each section at its
per-run cap, so that a model whose decoding is held to the schema cannot repeat one entry until
the output limit cuts the answer off (a small model does). The schema is strict
in the form every provider accepts: each object lists all its properties as required and allows
no others, an optional one may be null; length and pattern limits are left to the plan's models,
which check the answer whatever the decoding did. The one exception is a free text's
`maxLength`, kept for a local server whose grammar honours it (llama.cpp, Ollama) and dropped by
the adapters of providers whose subset refuses it: a small model can loop inside one string too,
writing the same sentence into the prose until the output limit cuts it off.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import DEFAULT, Limits
from custodian_runtime.core.operations.schema import SANCTIONED_STATUSES
from custodian_runtime.core.plan.extract import PROPOSALS, PROSE, entry_model, sections

# More ids than this of one kind are not listed: the schema would outgrow what providers take.
MAX_ENUM = 300
# The observations one structured answer may list (the sections: their per-run caps).
MAX_OBSERVATIONS = 20
# A free text's length in a local server's grammar: the prose, and any other text. llama.cpp
# refuses a grammar that repeats a character 2000 times or more.
PROSE_CHARS = 1500
TEXT_CHARS = 1000
# The keywords every provider's schema subset accepts; the others stay in the plan's models.
_DROPPED = frozenset({"title", "default", "pattern", "minLength", "maxLength", "format"})


@dataclass(frozen=True)
class ObservedIds:
    """The ids a plan may name, by the param that names them."""

    by_param: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, summary: DomainSummary) -> ObservedIds:
        """The observed domain's workstreams, tasks, open decisions and flags, recent events
        (what a progress event rests on: its recent events and tasks)."""
        tasks = [t.id for ws in summary.workstreams for t in ws.tasks]
        events = [e.id for e in summary.recent_events]
        return cls(
            {
                "workstream_id": tuple(ws.id for ws in summary.workstreams),
                "task_id": tuple(tasks),
                "decision_id": tuple(d.id for d in summary.open_decisions if d.status == "open"),
                "flag_id": tuple(f.id for f in summary.open_flags if f.status == "open"),
                "evidence": tuple(events),
                "rests_on": (*events, *tasks),
            }
        )


def answer_keys(*, bare: bool = False) -> tuple[str, ...]:
    """The answer's keys in order, as the prompt restates them: `prose` first when bare."""
    return (*((PROSE,) if bare else ()), "observations", *sections())


def answer_schema(
    ids: ObservedIds | None = None, unavailable: Sequence[str] = (), limits: Limits = DEFAULT
) -> dict[str, Any]:
    """The JSON schema of a structured answer: `prose`, `observations`, then each section."""
    known = ids or ObservedIds({})
    properties: dict[str, Any] = {
        PROSE: {"type": "string", "description": "what you saw, did and why, for people"},
        "observations": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_OBSERVATIONS,
        },
    }
    for spec in operations.all_specs():
        if spec.default == "sanctioned":
            entry = _strict(entry_model(spec.params).model_json_schema(), known)
            if spec.status_write:
                entry["properties"]["status"] = {
                    "type": "string",
                    "enum": sorted(SANCTIONED_STATUSES),
                }
            properties[spec.section] = {
                "type": "array",
                "items": entry,
                "maxItems": limits.cap(spec.name),
            }
    offered = [
        _proposal(spec.name, spec.params.model_json_schema(), known)
        for spec in operations.all_specs()
        if spec.default == "approvable" and spec.name not in unavailable
    ]
    properties[PROPOSALS] = {
        "type": "array",
        "items": {"anyOf": offered},
        "maxItems": limits.max_queued,
    }
    return with_text_lengths(_object(properties))


def _proposal(name: str, params: Mapping[str, Any], known: ObservedIds) -> dict[str, Any]:
    return _object(
        {
            "operation": {"type": "string", "enum": [name]},
            "params": _strict(params, known),
            "rationale": {"type": "string"},
        }
    )


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _strict(schema: Mapping[str, Any], known: ObservedIds) -> dict[str, Any]:
    """A pydantic model's schema in the strict form: every property required, optional ones
    nullable, no limits beyond types and enums, ids limited to the observed ones."""
    required = set(schema.get("required", ()))
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        value = _limited(_plain(prop), known.by_param.get(name, ()))
        if name not in required and "anyOf" not in value:
            value = {"anyOf": [value, {"type": "null"}]}
        properties[name] = value
    return _object(properties)


def _plain(node: Any) -> Any:
    """`node` without the keywords not every provider accepts."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if k not in _DROPPED}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _limited(node: dict[str, Any], ids: tuple[str, ...]) -> dict[str, Any]:
    """An id field (or a list of ids, or a nullable one) limited to `ids`, when they are few."""
    if not ids or len(ids) > MAX_ENUM:
        return node
    if "anyOf" in node:
        return {"anyOf": [_limited(option, ids) for option in node["anyOf"]]}
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        return {**node, "items": _limited(node["items"], ids)}
    if node.get("type") == "string":
        return {**node, "enum": list(dict.fromkeys(ids))}
    return node


def with_text_lengths(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with a `maxLength` on every free text (a string without an `enum`): the prose at
    PROSE_CHARS, any other at TEXT_CHARS, or less where the plan's model allows less."""
    bounded: dict[str, Any] = _lengths(schema, TEXT_CHARS)
    prose = bounded["properties"].get(PROSE)
    if isinstance(prose, dict):
        bounded["properties"][PROSE] = {**prose, "maxLength": PROSE_CHARS}
    return bounded


def _lengths(node: Any, chars: int) -> Any:
    if isinstance(node, list):
        return [_lengths(v, chars) for v in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _lengths(v, chars) for k, v in node.items()}
    if out.get("type") == "string" and "enum" not in out:
        out["maxLength"] = min(chars, int(out.get("maxLength", chars)))
    return out
