"""`make bench` (watch part): one `custodian watch` over 10,000 small domains on a served hub.

A reference hub on loopback (in this process) is seeded with 10,000 small domains; `custodian
watch --all-domains` runs as a child process with the offline planner and serves /metrics. The
child's CPU (user + system, all threads, from /proc) is read around each step:

- the first pass: CPU per domain; the same on a hub of 100 domains (a run's cost must not grow
  with the other domains on the hub);
- idle intervals: per pass, the summary GETs (the loop's own counters) and the CPU, less one
  /metrics scrape (measured alone: the scrape's wall and CPU time is a figure too);
- a restart over the unchanged domains: the new process's CPU to its first pass's end, per
  domain (what the watch saw is kept; no domain runs again);
- a change in one domain: the time from the hub write to the end of that domain's run (its
  journal's `finished` record), against the interval;
- whole `custodian run --force` processes on a sample of the same domains;
- a `cmd:` model that sleeps: wall time of K domains with --parallel K against --parallel 1.

    python bench/watch.py                     # 10,000 domains, every 2 s
    python bench/watch.py --domains 1000 --sample 3

Targets (at 10,000): an idle pass one summary GET and at most 100 ms CPU; the first pass at most
50 ms CPU a domain, the same at 100 domains; a restart at most 5 ms CPU a domain; /metrics at
most 50 ms; a change acted on within one interval plus its run; K sleeps in about one.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from custodian_hub import ReferenceHub

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from support.fleet import fleet_names, seed_fleet  # noqa: E402

CUSTODIAN = str(Path(sys.executable).parent / "custodian")
MODEL = REPO / "tests" / "support" / "fakes" / "fleet_model.py"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process, every thread (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def common(hub: str, memory: Path, llm: str = "offline") -> list[str]:
    return ["--hub", hub, "--llm", llm, "--memory", str(memory), "--canon", str(REPO / "canon")]


class Child:
    """`custodian watch` as a child process, read through its /metrics."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.port = free_port()
        argv = [*argv, "--metrics-port", str(self.port)]
        self.proc = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)

    def figures(self) -> dict[str, float]:
        """The loop's counters (custodian_watch_*), summed over labels."""
        text = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=30).text
        out: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name.startswith("custodian_watch_") and not s.name.endswith("_created"):
                    out[s.name] = out.get(s.name, 0.0) + s.value
        return out

    def wait_for(
        self, test: Callable[[dict[str, float]], bool], every: float = 1.0
    ) -> dict[str, float]:
        while True:
            try:
                seen = self.figures()
                if test(seen):
                    return seen
            except httpx.HTTPError:
                pass
            time.sleep(every)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def start(url: str, memory: Path, env: dict[str, str], every: float) -> Child:
    """`custodian watch --all-domains` on `memory`, every `every` seconds."""
    argv = [CUSTODIAN, "watch", "--all-domains", "--every", str(every), "--parallel", "4",
            *common(url, memory)]  # fmt: skip
    return Child(argv, env)


def first_pass(child: Child, count: int, label: str = "") -> float:
    """Wait for a run of each domain; print the CPU per domain; the runs' CPU per run (ms)."""
    began = time.perf_counter()
    done = lambda f: f.get("custodian_watch_runs_finished_total", 0) >= count  # noqa: E731
    seen = child.wait_for(done, 2.0 if count > 500 else 0.2)
    wall, cpu = time.perf_counter() - began, cpu_s(child.proc.pid)
    per_run = seen["custodian_watch_run_cpu_seconds_total"] / count * 1000
    print(f"watch: first pass over {count} domains{label}: {wall:6.1f} s wall, {cpu:6.1f} s cpu "
          f"(the imports too), {cpu / count * 1000:6.1f} ms cpu per domain (target <= 50 ms); "
          f"a run's own thread {per_run:5.1f} ms cpu")  # fmt: skip
    return per_run


def scrape(child: Child) -> None:
    """One /metrics scrape of every domain's figures: wall and CPU of the serving process."""
    walls, cpus = [], []
    for _ in range(5):
        c0, t0 = cpu_s(child.proc.pid), time.perf_counter()
        httpx.get(f"http://127.0.0.1:{child.port}/metrics", timeout=30).raise_for_status()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu_s(child.proc.pid) - c0)
    print(f"watch: /metrics: median {statistics.median(walls) * 1000:5.1f} ms wall, "
          f"{statistics.median(cpus) * 1000:5.1f} ms cpu (clock ticks of 10 ms) "
          f"(target <= 50 ms)")  # fmt: skip


def restart(url: str, memory: Path, env: dict[str, str], count: int, every: float) -> None:
    """A new process over the same memory, nothing changed: its CPU until its first pass ended
    and every domain's figures were read back from its journal (less the scrapes that look)."""
    child = start(url, memory, env, every)
    try:
        seen = child.wait_for(lambda f: f.get("custodian_watch_passes_total", 0) >= 1, 0.2)
        looked = 0.0
        while True:
            c0 = cpu_s(child.proc.pid)
            text = httpx.get(f"http://127.0.0.1:{child.port}/metrics", timeout=30).text
            looked += cpu_s(child.proc.pid) - c0
            if text.count("custodian_last_run_timestamp_seconds{") >= count:
                break
            time.sleep(1.0)
        cpu = cpu_s(child.proc.pid) - looked
        runs = seen.get("custodian_watch_runs_started_total", 0)
    finally:
        child.stop()
    print(f"watch: restart over {count} unchanged domains: {cpu:5.2f} s cpu to its first pass's "
          f"end and every domain's figures read back (the imports too), "
          f"{cpu / count * 1000:5.2f} ms per domain (target <= 5 ms); {runs:.0f} runs")  # fmt: skip


def idle(child: Child, every: float, passes: int = 5) -> None:
    """CPU and summary GETs per idle pass: the CPU read between two scrapes, none inside."""
    child.wait_for(lambda f: f["custodian_watch_runs_in_flight"] == 0, 0.5)
    child.figures()  # the first scrape after the first pass joins every domain's lines
    before = child.figures()
    c1 = cpu_s(child.proc.pid)
    time.sleep(every * passes + every / 2)
    c2 = cpu_s(child.proc.pid)
    after = child.figures()
    n = after["custodian_watch_passes_total"] - before["custodian_watch_passes_total"]
    reads = (
        after["custodian_watch_overview_reads_total"]
        - before["custodian_watch_overview_reads_total"]
    )
    runs = (
        after["custodian_watch_runs_started_total"] - before["custodian_watch_runs_started_total"]
    )
    per_pass = (c2 - c1) / max(n, 1)
    print(f"watch: idle: {n:.0f} passes, {reads / max(n, 1):.1f} summary GET per pass, "
          f"{runs:.0f} runs, {per_pass * 1000:6.1f} ms cpu per pass (target <= 100 ms; "
          f"no scrape inside)")  # fmt: skip


def change(url: str, journals: Path, name: str, every: float) -> None:
    """The time from a write on the hub to the end of the run it causes."""
    journal = journals / f"{name}.jsonl"
    size = journal.stat().st_size
    said = {"workstream_id": f"{name}-ws", "task_id": f"{name}-t0", "event_type": "note",
            "summary": "Started on it.", "source": "ana"}  # fmt: skip
    t0 = time.perf_counter()
    httpx.post(f"{url}/events", json=said, timeout=5).raise_for_status()
    while b'"kind":"finished"' not in journal.read_bytes()[size:]:
        time.sleep(0.01)
    took = time.perf_counter() - t0
    print(
        f"watch: a change in one domain: its run ended {took:5.2f} s after the hub write "
        f"(interval {every:g} s; target <= one interval plus its run)"
    )


def per_process(url: str, memory: Path, env: dict[str, str], names: list[str]) -> None:
    """Whole `custodian run --force` processes on a sample of the same domains."""
    costs = []
    for name in names:
        argv = [CUSTODIAN, "run", "--domain", name, "--force", "--json", *common(url, memory)]
        child = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _, _, usage = os.wait4(child.pid, 0)
        costs.append(usage.ru_utime + usage.ru_stime)
    median = statistics.median(costs)
    print(f"run: a process per domain ({len(names)} sampled): median {median:5.2f} s cpu "
          f"(min {min(costs):.2f}, max {max(costs):.2f})")  # fmt: skip


def parallel(root: Path, env: dict[str, str], k: int = 4, sleep: float = 1.0) -> None:
    """Wall time of one pass over K domains whose model sleeps, --parallel K against 1."""
    db = root / "hub-k.sqlite3"
    seed_fleet(db, k)
    walls: dict[tuple[int, float], list[float]] = {}
    with ReferenceHub(db) as hub:
        for n in range(2):  # interleaved: each setting twice, the least wall time kept
            for width, nap in ((k, 0.0), (k, sleep), (1, sleep)):
                llm = f"cmd:{sys.executable} {MODEL} {nap}"
                argv = [CUSTODIAN, "watch", "--all-domains", "--once", "--parallel", str(width),
                        *common(hub.url, root / f"memory-k{n}-{width}-{nap}", llm)]  # fmt: skip
                t0 = time.perf_counter()
                subprocess.run(argv, env=env, stderr=subprocess.DEVNULL, check=True)
                walls.setdefault((width, nap), []).append(time.perf_counter() - t0)
    base, wide, narrow = (min(walls[w]) for w in ((k, 0.0), (k, sleep), (1, sleep)))
    print(f"watch: {k} model calls of {sleep:g} s beyond a pass whose model answers at once "
          f"({base:4.2f} s): --parallel {k} +{wide - base:4.2f} s, --parallel 1 "
          f"+{narrow - base:4.2f} s (target: K calls in about one sleep)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Seed, run and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--domains", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--sample", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = dict(os.environ, PYTHONPYCACHEPREFIX=str(root / "pycache"))
        env = {k: v for k, v in env.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB_"))}
        seed_fleet(root / "hub-small.sqlite3", args.small)
        with ReferenceHub(root / "hub-small.sqlite3") as hub:
            child = start(hub.url, root / "memory-small", env, args.every)
            try:
                small = first_pass(child, args.small)
            finally:
                child.stop()
        seed_fleet(root / "hub.sqlite3", args.domains)
        with ReferenceHub(root / "hub.sqlite3") as hub:
            memory = root / "memory-watch"
            child = start(hub.url, memory, env, args.every)
            try:
                big = first_pass(child, args.domains)
                idle(child, args.every)
                scrape(child)
                change(hub.url, memory / "journal", fleet_names(args.domains)[args.domains // 2],
                       args.every)  # fmt: skip
            finally:
                child.stop()
            print(
                f"watch: a run's own CPU at {args.small} domains {small:5.1f} ms, at "
                f"{args.domains} {big:5.1f} ms: {big / small:4.2f}x (target: the same)"
            )
            restart(hub.url, memory, env, args.domains, args.every)
            step = max(args.domains // args.sample, 1)
            per_process(hub.url, memory, env, fleet_names(args.domains)[::step][: args.sample])
        parallel(root, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
