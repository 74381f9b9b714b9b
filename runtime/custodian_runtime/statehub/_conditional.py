"""Conditional domain reads (contract v1.2): `If-None-Match` with a revision, and 304 back."""

from __future__ import annotations

import httpx

from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.statehub._failures import parse_body

# Their home is statehub/not_modified.py (light: a skip asks without pydantic).
from custodian_runtime.statehub.not_modified import NOT_MODIFIED as NOT_MODIFIED
from custodian_runtime.statehub.not_modified import NotModified as NotModified
from custodian_runtime.statehub.not_modified import if_none_match_header as if_none_match_header
from custodian_runtime.statehub.not_modified import revision_named


def summary_or_not_modified(
    response: httpx.Response, attempts: int, domain: str, asked: int | None
) -> DomainSummary | NotModified:
    """A 304 as `NotModified` (at the revision its ETag names, else the one asked for); any
    other answer parsed as the domain's summary."""
    if response.status_code != NOT_MODIFIED or asked is None:
        return parse_body(DomainSummary, response, attempts)
    return NotModified(domain, revision_named(response, asked))
