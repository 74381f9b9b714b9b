"""A journal record's fields and hash: what links it to the record before it.

Light on purpose (no pydantic): `core/journal/records.make_record` builds every record from
these, and a skip writes its three records with them alone (run/_quick.py), byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from custodian_runtime.core.digest import canonical_json, sha256_hex

SCHEMA_VERSION = 1
GENESIS = "0" * 64


def format_at(at: datetime) -> str:
    """RFC 3339 in UTC with microseconds and a `Z` suffix; naive datetimes are refused."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("journal times must be timezone-aware (pass a clock that returns UTC)")
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_at(text: str) -> datetime:
    """Inverse of `format_at`."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def chain_fields(
    after: tuple[int, str] | None,
    run_id: str,
    domain: str,
    kind: str,
    at: datetime,
    data: Mapping[str, Any],
) -> dict[str, Any]:
    """Every field of the record that follows `after` (its seq and hash; None: the first) but
    its hash."""
    # A round trip through canonical JSON turns models, tuples and datetimes into plain JSON, so
    # the record hashes the same after it is read back.
    plain = json.loads(canonical_json(dict(data)))
    return {
        "v": SCHEMA_VERSION,
        "seq": 1 if after is None else after[0] + 1,
        "run_id": run_id,
        "domain": domain,
        "kind": kind,
        "at": format_at(at),
        "data": plain,
        "prev": GENESIS if after is None else after[1],
    }


def fields_hash(fields: Mapping[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of a record's fields without `hash` and `seal`."""
    return sha256_hex(
        canonical_json({k: v for k, v in fields.items() if k not in ("hash", "seal")})
    )


def record_line(fields: Mapping[str, Any]) -> str:
    """The record as written to disk: canonical JSON, no `seal` key when unsealed."""
    return canonical_json({k: v for k, v in fields.items() if k != "seal" or v is not None})
