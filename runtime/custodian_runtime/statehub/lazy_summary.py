"""`GET /state/summary` read once a pass: its names and revisions parsed at once, the whole
summary (the counts of every domain) parsed only when a run is due.

A domain's counts change only with its revision (contract v1.2), so the whole is parsed from
the domains whose revision moved since the last pass, the others' parsed entries reused
(`whole(known)`): a pass with one change pays for one domain's counts, not 10,000.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

import httpx

from custodian_runtime.core.contract import (
    DomainOverview,
    DomainRevision,
    StateSummary,
    SummaryRevisions,
)
from custodian_runtime.statehub._failures import parse_body

ParsedBefore = Mapping[str, DomainOverview]


class LazySummary:
    """One answer of `GET /state/summary`: `domains` now, `whole()` when first needed."""

    def __init__(self, response: httpx.Response | None, attempts: int,
                 whole: StateSummary | None = None) -> None:  # fmt: skip
        self._response, self._attempts, self._whole = response, attempts, whole
        self._lock = threading.Lock()  # the runs of a pass may ask from several threads
        if whole is not None:
            self.domains: tuple[DomainRevision, ...] = tuple(
                DomainRevision(domain=d.domain, revision=d.revision) for d in whole.domains
            )
        else:
            assert response is not None
            self.domains = parse_body(SummaryRevisions, response, attempts).domains

    @classmethod
    def of(cls, whole: StateSummary) -> LazySummary:
        """A summary already parsed whole."""
        return cls(None, 0, whole)

    def whole(self, known: ParsedBefore | None = None) -> StateSummary:
        """The summary with every domain's counts, parsed once (the same object for every run,
        so its index, core/context/overview.py, is made once too); a HubError if malformed.

        `known`: domains parsed before, by name; one whose revision is the same is reused."""
        with self._lock:
            if self._whole is None:
                assert self._response is not None
                self._whole = _parsed(self._response, self._attempts, known or {})
                self._response = None  # the bytes are not kept once parsed
            return self._whole


def _parsed(response: httpx.Response, attempts: int, known: ParsedBefore) -> StateSummary:
    """The body as a StateSummary, each domain whose revision did not move taken from `known`."""
    try:
        raw = json.loads(response.content)
    except ValueError:
        raw = None
    if not isinstance(raw, dict) or not isinstance(raw.get("domains"), list) or not known:
        return parse_body(StateSummary, response, attempts)
    domains: list[object] = []
    for item in raw["domains"]:
        name = item.get("domain") if isinstance(item, dict) else None
        same = known.get(name) if isinstance(name, str) else None
        moved = same is None or same.revision is None or item.get("revision") != same.revision
        domains.append(item if moved else same)  # a parsed entry is taken as it is
    return parse_body(StateSummary, response, attempts, {**raw, "domains": domains})
