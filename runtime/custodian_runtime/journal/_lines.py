"""Journal lines read back: strict canonical JSON, one Record a line, a torn tail told apart."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.fold.api import Record


@dataclass(frozen=True)
class Parsed:
    """A journal file's bytes as records, damage, and the torn tail after the last good line."""

    records: tuple[Record, ...]
    damage: tuple[str, ...]
    good_end: int
    torn: bytes
    torn_line: int
    torn_reason: str


def parse_line(raw: bytes) -> Record | str:
    """One journal line parsed into a Record, or the reason it is not one."""
    try:
        text = raw.decode("utf-8")
        value = strict_loads(text)
    except UnicodeDecodeError:
        return "not valid UTF-8"
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:
        return f"not strict JSON ({exc})"
    if not isinstance(value, dict):
        return "not a JSON object"
    try:
        record = Record.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"not a journal record ({where}: {first['msg']})"
    # Every writer emits canonical JSON, so any other spelling means the bytes were edited.
    if canonical_json(value) != text:
        return "not in canonical JSON form (the line was edited)"
    return record


def parse_data(data: bytes) -> Parsed:
    """Every complete line parsed; a bad last line is the torn tail, a bad line before it damage."""
    *complete, fragment = data.split(b"\n")
    parsed = [parse_line(raw) for raw in complete]
    torn, torn_line, reason = b"", 0, ""
    good_end = len(data) - len(fragment)
    if fragment:
        torn, torn_line, reason = fragment, len(complete) + 1, "no trailing newline"
    elif parsed and isinstance(parsed[-1], str):
        torn, torn_line, reason = complete[-1] + b"\n", len(complete), parsed[-1]
        good_end -= len(torn)
        parsed.pop()
    damage = tuple(f"line {n}: {p}" for n, p in enumerate(parsed, start=1) if isinstance(p, str))
    records = tuple(p for p in parsed if isinstance(p, Record))
    return Parsed(records, damage, good_end, torn, torn_line, reason)


def torn_report(parsed: Parsed) -> str:
    """What a reader reports of a torn tail it leaves for the next run."""
    return (
        f"line {parsed.torn_line}: torn tail, {len(parsed.torn)} byte(s), "
        f"{parsed.torn_reason} (the next run sets it aside)"
    )


def record_of(raw: bytes) -> Record | None:
    """A line read back as a Record, or None if it is not one."""
    parsed = parse_line(raw.rstrip(b"\n"))
    return parsed if isinstance(parsed, Record) else None
