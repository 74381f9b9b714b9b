"""`--prune-keep`: each domain pruned once a day, at its own minute, between its runs."""

from __future__ import annotations

from dataclasses import replace

from custodian_runtime.clock import utc_now
from custodian_runtime.errors import CustodianError
from custodian_runtime.watch._prune import minute_of, turn_of, turns_between
from custodian_runtime.watch._state import LoopState


class Pruning(LoopState):
    """The domains whose minute to be pruned came, and each one's prune."""

    def _turns(self, names: list[str]) -> list[str]:
        """The domains whose minute to be pruned came since the last pass, marked in flight."""
        if self.request.prune_keep is None:
            return []
        now = minute_of(utc_now())
        last, self._pruned_to = self._pruned_to, now
        if last is None:
            return []  # the first pass only starts the clock
        turns = self._prune_turns
        found = []
        with self._lock:
            for name in names:
                turn = turns.get(name)
                if turn is None:
                    turn = turns[name] = turn_of(name)
                if turns_between(last, now, turn) and name not in self._in_flight:
                    self._in_flight.add(name)
                    found.append(name)
        return found

    def _prune(self, name: str) -> None:
        """One domain's prune, as `custodian journal prune`; what it did said when anything."""
        from custodian_runtime.journal.prune import prune

        s, keep = self.settings, self.request.prune_keep
        assert keep is not None
        try:
            if self.stop:
                return
            done = prune(s.memory_dir, name, keep, utc_now(), s.seal_key)
            if done.anchor is not None or done.approvals:
                self._say(f"prune: {done.text()}")
            stamp = self._stamp(name)
            with self._lock:  # its own change: the domain is not due for it
                known = self.known.get(name)
                if known is not None and not isinstance(stamp, bool):
                    self.known[name] = replace(known, stamp=stamp)
                    self._dirty = True
        except CustodianError as exc:  # a run's lock held, a write open: the next day
            self._say(f"prune: {name}: not pruned ({exc.message})")
        finally:
            with self._lock:
                self._in_flight.discard(name)
