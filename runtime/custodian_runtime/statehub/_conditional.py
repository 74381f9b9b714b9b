"""Conditional domain reads (contract v1.2): `If-None-Match` with a revision, and 304 back."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.statehub._failures import parse_body

NOT_MODIFIED = 304
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


def summary_or_not_modified(
    response: httpx.Response, attempts: int, domain: str, asked: int | None
) -> DomainSummary | NotModified:
    """A 304 as `NotModified` (at the revision its ETag names, else the one asked for); any
    other answer parsed as the domain's summary."""
    if response.status_code != NOT_MODIFIED or asked is None:
        return parse_body(DomainSummary, response, attempts)
    found = _REVISION_TAG.fullmatch(response.headers.get("ETag", "").strip())
    return NotModified(domain, int(found.group(1)) if found else asked)
