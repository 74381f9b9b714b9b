"""What the loop keeps between passes, and the few helpers every part of it uses."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Mapping

import httpx

from custodian_runtime import __version__
from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import DomainOverview
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.metrics import build_info
from custodian_runtime.core.redact import redact
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.metrics.checks import checks_path
from custodian_runtime.metrics.text import FleetText
from custodian_runtime.packaged import revision
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.settings import Settings
from custodian_runtime.watch._due import Learned, Stamp, stamp_of
from custodian_runtime.watch._figures import LoopFigures
from custodian_runtime.watch._request import CarryOut, WatchRequest
from custodian_runtime.watch._seen import seen_path


class LoopState:
    """The loop's state: what it learned of each domain, its figures, what runs now."""

    def __init__(self, settings: Settings, request: WatchRequest, carry_out: CarryOut) -> None:
        self.settings, self.request, self.carry_out = settings, request, carry_out
        self.stop = StopFlag()
        self.figures = LoopFigures()
        self.known: dict[str, Learned] = {}
        self._text = FleetText(build_info(__version__, revision()))  # each domain's, kept
        self._checked: dict[str, float] = {}  # when each domain was last looked at (Unix time)
        self.worst = 0  # the highest exit code of any run: `--once` exits with it
        self._in_flight: set[str] = set()
        self._lock = threading.Lock()
        self._journals: dict[str, str] = {}  # each domain's journal path, made once
        self._said: set[str] = set()
        self._canon: tuple[Stamp, ...] | None = None
        shard = request.shard
        where = (shard.index, shard.count) if shard else None
        self._seen = seen_path(settings.memory_dir, where)
        self._checks = checks_path(settings.memory_dir, where)  # each domain's last check, kept
        self._checks_kept_at = float("-inf")  # when they were last kept (monotonic)
        self._seen_key: str | None = None  # set by the first pass, with the canon's stamps
        self._dirty = False  # learned something since what was seen was last kept
        self._kept_at = float("-inf")  # when it was last kept (monotonic)
        self._frozen_at = 0  # the domains' state when the heap was last frozen
        self._overviews: Mapping[str, DomainOverview] = {}  # the last parsed counts, by name
        self._figured: set[str] = set()  # domains whose figures /metrics shows
        self._unfigured: set[str] = set()  # read back at start, their figures not read yet
        self._pruned_to: int | None = None  # the minute of the day the last pass reached
        self._prune_turns: dict[str, int] = {}  # each domain's minute, made once
        self._ended: Counter[str] = Counter()  # runs ended since the last pass's line, by status
        self._started = utc_now().timestamp()
        self._transport: httpx.BaseTransport | None = None  # the process's pool, while serving

    def _stamp(
        self, name: str, guidance: Mapping[str, Stamp] | None = None
    ) -> tuple[Stamp, Stamp] | bool:
        """The domain's journal and guidance files now; False for a name no journal can hold.

        `guidance`: the canon's guidance files stamped once for the pass (`guidance_stamps`), so
        a pass over 10,000 domains stats their journals alone."""
        path = self._journals.get(name)
        if path is None:
            try:
                path = str(JournalStore(self.settings.memory_dir).path(name))
            except CustodianError as exc:
                self._once(name, f"{name}: not run ({exc.message})")
                return False
            self._journals[name] = path
        if guidance is None:
            return (stamp_of(path), stamp_of(self.settings.canon_dir / "domains" / f"{name}.md"))
        return (stamp_of(path), guidance.get(name))

    def _once(self, key: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self._say(text)

    def _say(self, text: str) -> None:
        sys.stderr.write(for_terminal(f"custodian: watch: {redact(text)}") + "\n")
        sys.stderr.flush()
