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
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from custodian_runtime.clock import utc_now
from custodian_runtime.core.context.overview import index_of
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.errors import ConfigError, HubError, Interrupted
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.connect import open_hub, shared_transport
from custodian_runtime.statehub.lazy_summary import LazySummary
from custodian_runtime.watch._due import decisions_waiting, due, guidance_stamps
from custodian_runtime.watch._pruning import Pruning
from custodian_runtime.watch._request import CarryOut, WatchRequest
from custodian_runtime.watch._restart import Restart
from custodian_runtime.watch._runs import PassRuns
from custodian_runtime.watch._said import configuration, ended_since, pass_line
from custodian_runtime.watch._select import chosen

# A listed domain the hub does not know: `--once` exits as `custodian run --domain` would.
EXIT_UNKNOWN = ConfigError.exit_code
UNKNOWN_NAMED = 10  # unknown domains a pass names; the rest are counted
FREEZE_FROM = 1000  # domains' state below this is too small for the collector to matter
KEEP_EVERY_S = 60.0  # what was seen is written at most this often (and at the end): O(domains)
HEALTHY_PASSES = 3  # /healthz fails when no pass ended within this many intervals


class Watch(PassRuns, Pruning, Restart):
    """The loop: passes over the watched domains, and the runs they start."""

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
                        self._freeze_heap()
                        if self.request.once or self._wait(began + self.request.every_s):
                            break
            finally:
                pool.shutdown(wait=True, cancel_futures=bool(self.stop))
                self.keep_seen()  # what the last runs learned, for the next start
                self.keep_checks()
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
        self.keep_checks(every_s=KEEP_EVERY_S)

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

    def _freeze_heap(self) -> None:
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
