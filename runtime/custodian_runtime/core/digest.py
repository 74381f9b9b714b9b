"""Canonical JSON and SHA-256 digests: how the runtime names a state, a plan item or a record."""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a skip names its records without loading pydantic (run/_quick.py)
    from custodian_runtime.core.contract import DomainSummary


def canonical_json(value: Any) -> str:
    """Sorted keys, no insignificant white space, UTF-8 kept as is: equal data, equal text.

    Strict JSON only: NaN and the infinities raise ValueError rather than being written as the
    bare `NaN`/`Infinity` that no JSON parser has to accept.
    """
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_default,
    )


def strict_loads(text: str | bytes, **kwargs: Any) -> Any:
    """`json.loads` that refuses NaN, Infinity and numbers too large for a float (`1e400`)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float, **kwargs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number; numbers must be finite")
    return value


def sha256_hex(text: str | bytes) -> str:
    """SHA-256 of text (UTF-8) or bytes, as lowercase hex."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of `value`."""
    return sha256_hex(canonical_json(value))


@dataclass(frozen=True)
class SummaryDigests:
    """Everything a run names a summary by, computed from one dump of it."""

    text: str  # canonical JSON without `generated_at`: the snapshot's content
    state: str  # its SHA-256: the domain's state digest
    workstreams: dict[str, str]  # one digest per workstream (`workstream_digests`)


def summary_digests(summary: DomainSummary) -> SummaryDigests:
    """The state digest, the snapshot's text and the per-workstream digests, dumped once."""
    data = summary.model_dump(mode="json", exclude={"generated_at"})
    text = canonical_json(data)
    return SummaryDigests(text, sha256_hex(text), _workstream_digests(data))


def workstream_digests(summary: DomainSummary) -> dict[str, str]:
    """One digest per workstream: its fields and tasks, its open flags and its recent events."""
    return _workstream_digests(summary.model_dump(mode="json"))


def _workstream_digests(data: dict[str, Any]) -> dict[str, str]:
    flags: dict[str | None, list[Any]] = defaultdict(list)
    events: dict[str | None, list[Any]] = defaultdict(list)
    for flag in data.get("open_flags", ()):
        flags[flag.get("workstream_id")].append(flag)
    for event in data.get("recent_events", ()):
        events[event.get("workstream_id")].append(event)
    return {
        ws["id"]: digest({"workstream": ws, "flags": flags[ws["id"]], "events": events[ws["id"]]})
        for ws in data.get("workstreams", ())
    }


def _default(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot put {type(value).__name__} into canonical JSON")
