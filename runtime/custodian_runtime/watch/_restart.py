"""What survives a restart: what was seen, kept and read back, and each domain's figures."""

from __future__ import annotations

import time

from custodian_runtime.clock import utc_now
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.metrics import domain_figures
from custodian_runtime.metrics.checks import save_checks
from custodian_runtime.watch._due import canon_stamp
from custodian_runtime.watch._seen import load_seen, save_seen, seen_key
from custodian_runtime.watch._state import LoopState


class Restart(LoopState):
    """What the loop keeps for its next start, and reads back at its first pass."""

    def _restored(self, names: list[str]) -> list[str]:
        """The watched domains read back at start whose figures are not read yet (once)."""
        with self._lock:
            waiting, self._unfigured = self._unfigured, set()
        return [n for n in names if n in waiting]

    def _figure(self, name: str) -> None:
        """A domain known from before the start, not run since: its figures from its journal."""
        if self.stop:
            return
        s, now = self.settings, utc_now()
        try:
            # The queue's items from its index, as after a run: not every approval file.
            items = ApprovalStore(s.memory_dir, s.seal_key, write_index=False).view(name, now).items
            figures = domain_figures(s.memory_dir, name, s.seal_key, now, items)
        except (CustodianError, OSError):
            return  # its next run reads its journal and says why
        with self._lock:
            if name not in self._figured:  # a run that ended meanwhile put newer ones
                self._text.put(figures)
                self._figured.add(name)

    def _canon_check(self) -> None:
        """A changed constitution, canon directory or other canon file makes every domain due
        once; at the first pass, what a watch with the same settings and canon saw before is
        read back."""
        now = canon_stamp(self.settings.canon_dir)
        if self._canon is not None and now != self._canon:
            with self._lock:
                self.known.clear()
        if now != self._canon:
            self._seen_key = seen_key(self.settings.digest_view(), now)
        if self._canon is None:
            with self._lock:
                kept = load_seen(self._seen, self._seen_key or "")
                self._unfigured = set(kept) - self._figured
                self.known = {**kept, **self.known}
        self._canon = now

    def keep_checks(self, *, every_s: float = 0.0) -> None:
        """Keep each domain's last check for `custodian status`, when the last keep is `every_s`
        old; a failure is said once."""
        with self._lock:
            if not self._checked or time.monotonic() - self._checks_kept_at < every_s:
                return
            checked, self._checks_kept_at = dict(self._checked), time.monotonic()
        try:
            save_checks(self._checks, checked)
        except OSError as exc:
            self._once(" checks", f"when each domain was last checked is not kept: {exc}")

    def keep_seen(self, *, every_s: float = 0.0) -> None:
        """Keep what was learned for the next start, when something was and the last keep is
        `every_s` old; a failure is said once."""
        with self._lock:
            if not self._dirty or self._seen_key is None:
                return
            if time.monotonic() - self._kept_at < every_s:
                return
            known, self._dirty, self._kept_at = dict(self.known), False, time.monotonic()
        try:
            save_seen(self._seen, self._seen_key, known)
        except OSError as exc:
            self._once(" seen", f"what this watch saw is not kept for its next start: {exc}")
