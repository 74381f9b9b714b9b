"""A 304 from the hub (contract v1.2): `If-None-Match` with a revision, and the revision back."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

NOT_MODIFIED = 304
# The hub's default summary window, as a run asks for it; writes/_summary.read_summary widens
# it when Custodian's events crowd it.
SUMMARY_EVENTS = 50
_REVISION_TAG = re.compile(r'^(?:W/)?"?([0-9]{1,18})"?$')


@dataclass(frozen=True)
class NotModified:
    """The hub answered 304: the domain is still at `revision`, and nothing in it changed."""

    domain: str
    revision: int


def if_none_match_header(revision: int | None) -> dict[str, str]:
    """The header that asks for the summary only if the domain moved past `revision`."""
    if revision is None:
        return {}
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 0:
        raise ValueError(f"if_none_match must be a revision (a whole number >= 0): {revision!r}")
    return {"If-None-Match": f'"{revision}"'}


def revision_named(response: httpx.Response, asked: int) -> int:
    """The revision a 304's ETag names, else the one asked for."""
    found = _REVISION_TAG.fullmatch(response.headers.get("ETag", "").strip())
    return int(found.group(1)) if found else asked
