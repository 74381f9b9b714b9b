"""A 304 from the hub (contract v1.2): `If-None-Match` with a revision, and the revision back.

Light on purpose (no pydantic): a skip asks with `ask_not_modified` (run/_quick.py).
"""

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


def ask_not_modified(
    url: str, token: str | None, timeout_s: float, proxy: str | None, domain: str, revision: int
) -> int | None:
    """The domain's summary asked as a run asks it, once, with `If-None-Match: "revision"`: the
    revision a 304 names, else None (any other answer or failure; a run asks again, with its
    retries, and says what failed)."""
    from custodian_runtime.errors import CustodianError
    from custodian_runtime.statehub._checks import checked_domain
    from custodian_runtime.statehub._http import http_client

    try:
        path = f"/domains/{checked_domain(domain)}/summary"
        _, client = http_client(url, token, timeout_s, None, proxy)
        with client:
            response = client.get(path, params={"events": SUMMARY_EVENTS},
                                  headers=if_none_match_header(revision))  # fmt: skip
    except (httpx.HTTPError, CustodianError):
        return None
    if response.status_code != NOT_MODIFIED:
        return None
    return revision_named(response, revision)
