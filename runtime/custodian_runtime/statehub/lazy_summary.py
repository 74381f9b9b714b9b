"""`GET /state/summary` read once a pass: its names and revisions parsed at once, the whole
summary (the counts of every domain) parsed the first time a run asks, once for all the runs."""

from __future__ import annotations

import threading

import httpx

from custodian_runtime.core.contract import DomainRevision, StateSummary, SummaryRevisions
from custodian_runtime.statehub._failures import parse_body


class LazySummary:
    """One answer of `GET /state/summary`: `domains` now, `whole()` when first needed."""

    def __init__(self, response: httpx.Response | None, attempts: int,
                 whole: StateSummary | None = None) -> None:  # fmt: skip
        self._response, self._attempts, self._whole = response, attempts, whole
        self._lock = threading.Lock()  # the runs of a pass ask from several threads at once
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

    def whole(self) -> StateSummary:
        """The summary with every domain's counts: parsed once, the same object for every run
        (so its index, core/context/overview.py, is made once too); a HubError if malformed."""
        with self._lock:
            if self._whole is None:
                assert self._response is not None
                self._whole = parse_body(StateSummary, self._response, self._attempts)
                self._response = None  # the bytes are not kept once parsed
            return self._whole
