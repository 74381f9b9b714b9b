"""A pass's runs: one domain's run in a worker thread, and what it leaves learned."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from datetime import datetime
from typing import TextIO, cast

from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.core.metrics import RunFacts
from custodian_runtime.errors import CustodianError
from custodian_runtime.metrics import domain_figures
from custodian_runtime.process.crash import report_crash
from custodian_runtime.process.phase_log import CONFIG_LINES
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import Settings
from custodian_runtime.watch._due import learn, relearned
from custodian_runtime.watch._state import LoopState
from custodian_runtime.watch._streams import Tagged, run_stream


class PassRuns(LoopState):
    """Each due domain's run, as `custodian run` composes it, and what the loop learns."""

    def _one(self, name: str, overview: StateSummary, revision: int | None) -> None:
        """One domain's run, in a worker thread; whatever happens, the others go on."""
        try:
            if self.stop:
                return  # the stop came before this run began: it is not started
            self.figures.count(started=1)
            settings = replace(self.settings, domain=name)
            began, cpu = utc_now(), time.thread_time()
            code, result = self._run(settings, overview)
            self.figures.ended(code, time.thread_time() - cpu)
            ended = utc_now()
            with self._lock:  # runs end in several threads at once
                self.worst = max(self.worst, code)
                self._ended[result.status if result else "failed"] += 1
                self._checked[name] = ended.timestamp()  # a run looks at its domain
            self._learn(settings, name, code, RunFacts(
                began, ended, code, result.status if result else "failed",
                result.counts() if result else {}, result.model if result else None,
                result.usage if result else {},
            ), revision)  # fmt: skip
        finally:
            with self._lock:
                self._in_flight.discard(name)

    def _run(self, settings: Settings, overview: StateSummary) -> tuple[int, RunResult | None]:
        """What `custodian run` composes: decisions carried out before and after the run."""
        name = settings.domain
        assert name is not None
        try:
            self.carry_out(settings)
            result = run(settings, overview=overview, stop=self.stop, stderr=run_stream(name),
                         said=CONFIG_LINES,
                         transport=self._transport)  # fmt: skip
            if not self.stop:
                self.carry_out(settings)
        except CustodianError as exc:
            self._say(f"{name}: exit {exc.exit_code}: {exc.message}")
            return exc.exit_code, None
        except Exception as exc:  # a bug in this run: saved and said; the others go on
            said = cast(TextIO, Tagged(sys.stderr, name))
            return report_crash(exc, settings.memory_dir, os.environ, said), None
        if result.exit_code != 0:
            self._say(f"{name}: {result.status} (exit {result.exit_code}): {result.message}")
        return result.exit_code, result

    def _learn(
        self, settings: Settings, name: str, code: int, facts: RunFacts, revision: int | None
    ) -> None:
        stamp = self._stamp(name)
        try:
            handed = revision if code == 0 else None
            known, items = learn(settings, name, facts.ended_at, handed, stamp)
            # What a run pushes to a Pushgateway (metrics/push.py), served here instead; the
            # queue's items come from its index, not from every approval file.
            figures = domain_figures(
                settings.memory_dir, name, settings.seal_key, facts.ended_at, items
            )
        except (CustodianError, OSError) as exc:
            with self._lock:
                self.known.pop(name, None)  # due again at the next pass, whose run says why
                self._dirty = True
            said = exc.message if isinstance(exc, CustodianError) else str(exc)
            self._say(f"{name}: its journal cannot be read back ({said})")
            return
        with self._lock:
            self.known[name] = known
            self._text.put(figures.with_run(facts))
            self._figured.add(name)
            self._dirty = True

    def _adopt_outside_runs(self, name: str, stamp: object, now: datetime) -> None:
        """Learn what another process's runs left in the domain's journal, when only runs
        appended to it: their commit is no work due here (watch/_due.py `relearned`)."""
        known = self.known.get(name)
        if known is None or stamp in (False, known.stamp) or name in self._in_flight:
            return  # the idle pass's case: one comparison, nothing read
        try:
            found = relearned(replace(self.settings, domain=name), name, known, stamp, now)
        except (CustodianError, OSError):
            return  # the pass decides with what it knew: a changed journal is due
        if found is not None:
            with self._lock:
                if name not in self._in_flight and self.known.get(name) is known:
                    self.known[name] = found
