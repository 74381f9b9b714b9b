"""`custodian watch`: one long-running process that runs many domains as `custodian run` would.

Each pass reads the hub's `/state/summary` once and runs each watched domain that is due
(watch/_due.py): its revision moved, or local work waits. A run is the CLI's run of that domain
(the caller's `carry_out` of recorded decisions before and after, `run()` between, under the
domain's lock and journal), handed the pass's overview so that it does not read it again.

Threads, not processes, carry the runs, at most `--parallel K` at once:
- A run spends its time waiting on the hub and the model (HTTP, or a child process for `cmd:`),
  which release the GIL, so K threads keep K model calls in flight. The CPU of a run itself
  (parsing, rendering, the journal) is small, and the imports are paid once, where a process
  per run pays them each time (about a second).
- Signal handlers run only in the main thread. It routes SIGTERM and SIGINT to one StopFlag that
  every run is handed (`run(stop=...)`), so each run finishes the write in flight, starts no
  other and ends interrupted, exactly as `custodian run` does; no queued run starts after it.
- What the threads share is safe to share: stderr (one write per line; JSON mode routes it once
  for the process) and `clock.simulated_clock`, which only a bench sets and this never does.
  Each run has its own client, model, journal writer and lock; the clients send through one
  connection pool for the process (statehub/connect.shared_transport), TLS set up only for https.
- A bug in one run is caught in its thread: its traceback saved as `custodian run` saves it
  (crash.report_crash), exit 1 for that domain; the others go on.

The loop holds no state that matters: a run's writes are exactly-once by its journal and lock.
What the loop learned of each domain it keeps for its next start (watch/_seen.py), a cache
checked against each domain's files, so an unchanged domain is not run again after a restart;
without it every domain is due once (an unchanged one is a 304). SIGKILL loses nothing but the
runs in flight, which the next run of each domain settles from its journal, as after a killed
`custodian run`.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TextIO, cast

import httpx

from custodian_runtime import __version__
from custodian_runtime.approvals.store import ApprovalStore
from custodian_runtime.clock import utc_now
from custodian_runtime.core.context.overview import index_of
from custodian_runtime.core.contract import DomainOverview, StateSummary
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.metrics import RunFacts, build_info
from custodian_runtime.core.redact import redact
from custodian_runtime.errors import ConfigError, CustodianError, HubError, Interrupted
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.metrics import domain_figures
from custodian_runtime.metrics.text import FleetText
from custodian_runtime.packaged import revision
from custodian_runtime.process.crash import report_crash
from custodian_runtime.process.phase_log import CONFIG_LINES
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.connect import open_hub, shared_transport
from custodian_runtime.statehub.lazy_summary import LazySummary
from custodian_runtime.watch._due import (
    Learned,
    Stamp,
    canon_stamp,
    decisions_waiting,
    due,
    guidance_stamps,
    learn,
    relearned,
    stamp_of,
)
from custodian_runtime.watch._figures import LoopFigures
from custodian_runtime.watch._prune import minute_of, turn_of, turns_between
from custodian_runtime.watch._said import configuration, ended_since, pass_line
from custodian_runtime.watch._seen import load_seen, save_seen, seen_key, seen_path
from custodian_runtime.watch._select import Shard, chosen
from custodian_runtime.watch._streams import Tagged, run_stream

CarryOut = Callable[[Settings], None]
# A listed domain the hub does not know: `--once` exits as `custodian run --domain` would.
EXIT_UNKNOWN = ConfigError.exit_code
UNKNOWN_NAMED = 10  # unknown domains a pass names; the rest are counted
FREEZE_FROM = 1000  # domains' state below this is too small for the collector to matter
KEEP_EVERY_S = 60.0  # what was seen is written at most this often (and at the end): O(domains)
HEALTHY_PASSES = 3  # /healthz fails when no pass ended within this many intervals


@dataclass(frozen=True)
class WatchRequest:
    """What `custodian watch` was asked for."""

    domains: tuple[str, ...] | None = None  # None: every domain the hub lists
    shard: Shard | None = None
    every_s: float = 60.0
    parallel: int = 4
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    once: bool = False  # one pass, wait for its runs, exit
    prune_keep: timedelta | None = None  # prune each domain once a day, keeping this much


class Watch:
    """The loop: passes over the watched domains, and the runs they start."""

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
        self._seen = seen_path(settings.memory_dir, (shard.index, shard.count) if shard else None)
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

    def serve(self) -> int:
        """Pass after pass until a signal (or one pass with `once`); the exit code."""
        s = self.settings
        assert s.hub is not None
        r = self.request
        self._say(configuration(s, r.domains, r.shard, r.every_s, r.parallel))  # once
        # The pool of connections outlives the runs: it closes after the last one has ended.
        with shared_transport(s.hub) as self._transport:
            pool = ThreadPoolExecutor(self.request.parallel, thread_name_prefix="watch")
            try:
                with open_hub(s.hub, s.embedded_dir, utc_now, transport=self._transport,
                              stop=self.stop) as client:  # fmt: skip
                    while not self.stop:
                        began = time.monotonic()
                        self.pass_once(client.state_summary_lazy, pool)
                        self._settle_heap()
                        if self.request.once or self._wait(began + self.request.every_s):
                            break
            finally:
                pool.shutdown(wait=True, cancel_futures=bool(self.stop))
                self.keep_seen()  # what the last runs learned, for the next start
                with self._lock:
                    ended = dict(self._ended)
                self._say(f"stopped after {self.figures.passes} pass(es); {ended_since(ended)}")
        if self.stop.signal is not None:
            return 128 + self.stop.signal
        return self.worst

    def pass_once(
        self, read: Callable[[], StateSummary | LazySummary], pool: ThreadPoolExecutor
    ) -> None:
        """Read the overview once and start a run for each due domain not running already.

        Which are due needs only the names and revisions; the counts are parsed only when a
        domain is due, and only the domains' whose revision moved (statehub/lazy_summary.py).
        """
        overview = self._read(read)
        if overview is None:
            return
        names, missing = chosen((d.domain for d in overview.domains), self.request.domains,
                                self.request.shard)  # fmt: skip
        self._unknown(missing)
        self._canon_check()
        revisions = {d.domain: d.revision for d in overview.domains}
        due_now = self._due(names, revisions)
        if due_now:
            try:
                whole = overview.whole(self._overviews)
                self._overviews = index_of(whole).by_name  # made here once, not by each run
            except HubError as exc:
                self._say(f"GET /state/summary answered a summary that cannot be read: "
                          f"{exc.message}; the next pass tries again")  # fmt: skip
                with self._lock:
                    self._in_flight.difference_update(due_now)
                return
            for name in due_now:
                pool.submit(self._one, name, whole, revisions[name])
        for name in self._restored(names):  # after the runs: figures for /metrics, from disk
            pool.submit(self._figure, name)
        for name in self._turns(names):
            pool.submit(self._prune, name)
        self.figures.count(passes=1)
        self.figures.watched, self.figures.last_pass = len(names), utc_now().timestamp()
        with self._lock:
            ended, self._ended = dict(self._ended), Counter()
            busy = len(self._in_flight)
        self._say(pass_line(self.figures.passes, len(names), len(due_now), busy, ended))
        self.keep_seen(every_s=KEEP_EVERY_S)

    def _read(self, read: Callable[[], StateSummary | LazySummary]) -> LazySummary | None:
        """The pass's overview, or None when the read failed (said, and counted)."""
        try:
            read_now = read()
        except HubError as exc:
            self.figures.count(summary_reads=1, summary_failures=1)
            self._say(f"GET /state/summary failed: {exc.message}; the next pass tries again")
            return None
        self.figures.count(summary_reads=1)
        return read_now if isinstance(read_now, LazySummary) else LazySummary.of(read_now)

    def _unknown(self, missing: list[str]) -> None:
        """Listed domains the hub does not list: counted and said at every pass."""
        self.figures.unknown = len(missing)
        if missing:  # every pass: a typo in the list is an error, not a line once at start
            with self._lock:
                self.worst = max(self.worst, EXIT_UNKNOWN)  # `--once` does not exit 0 on it
            more = " ..." if len(missing) > UNKNOWN_NAMED else ""
            shown = ", ".join(missing[:UNKNOWN_NAMED]) + more
            self._say(f"{len(missing)} listed domain(s) the hub does not list, not run: {shown}")

    def _due(self, names: list[str], revisions: Mapping[str, int | None]) -> list[str]:
        """The domains to run now, marked in flight; each other one is checked (looked at)."""
        now, decided = utc_now(), decisions_waiting(self.settings.memory_dir)
        looked, due_now = now.timestamp(), []
        guidance = guidance_stamps(self.settings.canon_dir / "domains")
        stamps = [(name, self._stamp(name, guidance)) for name in names]  # the disk, unlocked
        for name, stamp in stamps:  # another process's runs alone: learned, not run again
            self._adopt_outside_runs(name, stamp, now)
        known, in_flight, checked = self.known, self._in_flight, self._checked
        with self._lock:  # once for the pass: 10,000 domains are a few ms under it
            for name, stamp in stamps:
                if self.stop:
                    break
                if name in in_flight or stamp is False:
                    continue
                why = due(known.get(name), revisions[name], now, stamp, name in decided)
                if why is None:
                    checked[name] = looked  # looked at, and nothing to do: a check
                    continue
                in_flight.add(name)
                due_now.append(name)
        return due_now

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
            settled = revision if code == 0 else None
            known, items = learn(settings, name, facts.ended_at, settled, stamp)
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

    def _settle_heap(self) -> None:
        """Once the domains' state has doubled since the last time, collect and freeze the heap:
        the cyclic collector then leaves the long-lived state of 10,000 domains alone, so a
        pass costs the same every time (it traversed all of it at each full collection)."""
        size = len(self.known) + len(self._figured)
        if size >= 2 * self._frozen_at + FREEZE_FROM:
            gc.collect()
            gc.freeze()  # what is alive now is kept; freed by its count as ever when dropped
            self._frozen_at = size

    def _wait(self, deadline: float) -> bool:
        """Sleep until `deadline`; True as soon as a signal came."""
        try:
            self.stop.sleep(deadline - time.monotonic())
        except Interrupted:
            return True
        return False

    def metrics_text(self) -> bytes:
        """Every domain's figures as a run pushes them, when each was last looked at, and the
        loop's own, UTF-8; a domain's lines are made when it changes, not at each scrape."""
        with self._lock:
            text = self._text.text(self._checked)
        return text + self.figures.exposition().encode()

    def health(self) -> str | None:
        """None while passes keep coming; else how long since the last one."""
        last = self.figures.last_pass or self._started
        late = utc_now().timestamp() - last
        if late > HEALTHY_PASSES * self.request.every_s + 30:
            return f"no pass for {late:.0f} s (every {self.request.every_s:g} s)"
        return None

    def _once(self, key: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self._say(text)

    def _say(self, text: str) -> None:
        sys.stderr.write(for_terminal(f"custodian: watch: {redact(text)}") + "\n")
        sys.stderr.flush()


def watch_command(settings: Settings, request: WatchRequest, carry_out: CarryOut) -> int:
    """Run the loop with SIGTERM/SIGINT routed to its stop flag, serving metrics when asked."""
    from custodian_runtime.process.stopping import stop_on_signals

    loop = Watch(settings, request, carry_out)
    with stop_on_signals(loop.stop):
        if request.metrics_port is None:
            return loop.serve()
        from custodian_runtime.metrics import MetricsServer

        server = MetricsServer(
            request.metrics_host, request.metrics_port, loop.metrics_text, loop.health
        )
        with server:
            loop._say(f"metrics on http://{request.metrics_host}:{server.port}/metrics")
            return loop.serve()
