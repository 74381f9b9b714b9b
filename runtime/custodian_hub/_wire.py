"""Small pieces the reference hub's modules share: API errors, timestamps and JSON on the wire."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

# One task version, quoted as an entity tag ("3"); a bare version (3) is read the same way.
IF_MATCH_PATTERN = r'^("[0-9]{1,18}"|[0-9]{1,18})$'
_IF_MATCH = re.compile(IF_MATCH_PATTERN)
# `*`, or a list of entity tags (weak or strong; a bare revision too). A tag that names no
# revision (`"abc"`) is well formed and matches nothing; no comma inside a tag.
_TAG = r'(W/)?"[!#-+\--~]*"|[0-9]{1,18}'
IF_NONE_MATCH_PATTERN = rf"^\s*(\*|({_TAG})(\s*,\s*({_TAG}))*)\s*$"
_IF_NONE_MATCH = re.compile(IF_NONE_MATCH_PATTERN)
_REVISION_TAG = re.compile(r'^(W/)?"?([0-9]{1,18})"?$')

ERROR_STATUS_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    422: "validation_error",
    500: "internal_error",
}


class ApiError(Exception):
    """An error answer of the hub: status, machine code and a detail that says what to fix."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code or ERROR_STATUS_CODES.get(status, "error")
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})  # more body fields, e.g. a 412's `current`

    def body(self) -> dict[str, Any]:
        """The error body every error answer carries, plus any extra fields."""
        return {**self.extra, "detail": self.detail, "code": self.code}


def etag_header(task: Mapping[str, Any]) -> dict[str, str]:
    """`ETag: "<version>"` for a task (v1.1)."""
    return {"ETag": f'"{task["version"]}"'}


def parse_if_match(raw: str | None) -> int | None:
    """The version an `If-Match: "<version>"` header names; None without the header.

    Anything else (`*`, a list, a weak tag) is a 400, as the OpenAPI document says.
    """
    if raw is None:
        return None
    found = _IF_MATCH.fullmatch(raw.strip())
    if found is None:
        raise ApiError(400, f'If-Match must be one quoted task version like "3", not {raw[:80]!r}')
    return int(found.group(1).strip('"'))


def parse_if_none_match(raw: str | None) -> frozenset[int] | str | None:
    """The revisions an `If-None-Match` header names, `*`, or None without the header (v1.2).

    A malformed header is a 400, as the OpenAPI document says.
    """
    if raw is None:
        return None
    if _IF_NONE_MATCH.fullmatch(raw) is None:
        raise ApiError(400, f'If-None-Match must be entity tags like "3" (or *), not {raw[:80]!r}')
    if raw.strip() == "*":
        return "*"
    revisions = set()
    for tag in raw.split(","):
        found = _REVISION_TAG.fullmatch(tag.strip())
        if found is not None:
            revisions.add(int(found.group(2)))
    return frozenset(revisions)


def to_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def db_timestamp(moment: datetime) -> str:
    """Fixed-width UTC text, so that timestamps stored in SQLite sort as text."""
    naive = to_utc(moment).replace(tzinfo=None)
    return naive.isoformat(timespec="microseconds") + "Z"


def wire_timestamp(stored: str | None) -> str | None:
    """RFC 3339 as the contract shows it: `...T08:00:00Z`, fractions only when there are any."""
    if stored is None:
        return None
    if stored.endswith(".000000Z"):
        return stored[: -len(".000000Z")] + "Z"
    return stored


def db_date(value: date | None) -> str | None:
    """A date as `YYYY-MM-DD`, or None."""
    return None if value is None else value.isoformat()


def dumps(value: Any) -> bytes:
    """JSON as the hub sends it: UTF-8, compact."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_body(raw: bytes) -> Any:
    """Parse a request body, or raise 400 with what is wrong with it."""
    if not raw.strip():
        raise ApiError(400, "the request needs a JSON body")
    try:
        text = raw.decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant)
        # A lone surrogate escape (\ud800) parses but cannot be stored as UTF-8.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeError as exc:
        raise ApiError(400, f"the body is not valid UTF-8 text: {exc}") from exc
    except RecursionError as exc:
        raise ApiError(400, "the JSON body is nested too deeply") from exc
    except ValueError as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}") from exc
    return value
