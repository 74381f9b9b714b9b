"""`make bench` (history part): does a run's cost grow with the journal's history?

Runs `custodian run` over and over, each in its own process, against one reference hub seeded
with a generated domain, with the offline model. Per run it takes the CPU time and peak RSS of
that process (os.wait4) and the bytes it added under memory/. Most runs find the domain
unchanged and skip; every `--force-every`th run is forced on the unchanged domain.

    python bench/history.py                  # the default: a few minutes
    python bench/history.py --runs 300       # the full history of the targets

Targets: the last runs' CPU and peak RSS within 1.2x of the 2nd run's; a skipped run adds at most
16 KiB to memory/; a forced run on an unchanged domain at most 128 KiB; a 10,000-task domain runs
well under 768 MiB at every point of its history.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_hub import ReferenceHub, load_seed

REPO = Path(__file__).resolve().parent.parent
CUSTODIAN = [str(Path(sys.executable).parent / "custodian")]


@dataclass(frozen=True)
class Sample:
    """One run: its status, CPU seconds, peak RSS in MiB and bytes it added under memory/."""

    number: int
    status: str
    forced: bool
    cpu_s: float
    rss_mib: float
    added: int


def generated_domain(tasks: int, now: datetime, domain: str = "gen") -> dict[str, Any]:
    """A domain of `tasks` tasks in workstreams of 100, a few events and flags."""
    stamp = (now - timedelta(days=3)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    count = max(1, tasks // 100)
    statuses = ["todo", "in_progress", "done", "blocked"]
    workstreams = [
        {"id": f"{domain}-ws-{w}", "domain": domain, "title": f"Workstream {w}",
         "status": "active", "owner": f"owner{w % 7}", "created_at": stamp, "updated_at": stamp}
        for w in range(count)
    ]  # fmt: skip
    rows = [
        {"id": f"{domain}-t-{n}", "workstream_id": f"{domain}-ws-{n % count}",
         "title": f"Task {n}: keep component {n} healthy", "description": "Routine upkeep.",
         "status": statuses[n % 4], "created_at": stamp, "updated_at": stamp}
        for n in range(tasks)
    ]  # fmt: skip
    events = [
        {"id": f"ev-{n}", "workstream_id": f"{domain}-ws-{n % count}", "task_id": None,
         "event_type": "note", "summary": f"Weekly check {n} done.", "source": "ops",
         "created_at": stamp}
        for n in range(20)
    ]  # fmt: skip
    return {"workstreams": workstreams, "tasks": rows, "decisions": [], "events": events,
            "flags": []}  # fmt: skip


def tree_bytes(root: Path) -> int:
    """Bytes of every file under `root`."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def one_run(hub_url: str, memory: Path, domain: str, force: bool, number: int) -> Sample:
    """`custodian run` in a child process; its own CPU and peak RSS from wait4."""
    argv = [*CUSTODIAN, "run", "--domain", domain, "--hub", hub_url, "--llm", "offline",
            "--memory", str(memory), "--canon", str(REPO / "canon"), "--json"]  # fmt: skip
    if force:
        argv.append("--force")
    before = tree_bytes(memory) if memory.exists() else 0
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err)
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 5):
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            print(f"  run {number}: exit {child.returncode}: {tail}", file=sys.stderr)
    result = json.loads(out) if out.strip() else {"status": f"exit {child.returncode}"}
    return Sample(
        number=number,
        status=str(result.get("status")),
        forced=force,
        cpu_s=usage.ru_utime + usage.ru_stime,
        rss_mib=usage.ru_maxrss / 1024,
        added=tree_bytes(memory) - before,
    )


def history(tasks: int, runs: int, force_every: int, root: Path, label: str) -> list[Sample]:
    """`runs` consecutive runs on a domain of `tasks` tasks; the first and every nth forced."""
    db = root / f"hub-{label}.sqlite3"
    load_seed(db, generated_domain(tasks, datetime.now(UTC)))
    memory = root / f"memory-{label}"
    samples = []
    with ReferenceHub(db) as hub:
        for number in range(1, runs + 1):
            force = number > 2 and number % force_every == 0
            samples.append(one_run(hub.url, memory, "gen", force, number))
            if number % 25 == 0:
                print(f"  {label}: {number}/{runs} runs", file=sys.stderr, flush=True)
    return samples


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def report(samples: list[Sample], tasks: int) -> None:
    """The figures for the targets, side by side."""
    second = samples[1]
    skipped = [s for s in samples if s.status == "skipped" and s.number > 2]
    tail = skipped[-10:]
    forced = [s for s in samples if s.forced]
    print(f"{tasks}-task domain, {len(samples)} runs ({len(forced)} forced)")
    print(f"  run 2:            cpu {second.cpu_s:6.2f} s   peak rss {second.rss_mib:7.1f} MiB")
    if tail:
        cpu, rss = _mean([s.cpu_s for s in tail]), _mean([s.rss_mib for s in tail])
        print(
            f"  last {len(tail)} skipped: cpu {cpu:6.2f} s   peak rss {rss:7.1f} MiB   "
            f"ratio cpu {cpu / second.cpu_s:4.2f}x (target <= 1.2x), "
            f"rss {rss / second.rss_mib:4.2f}x (target <= 1.2x)"
        )
    if skipped:
        worst = max(s.added for s in skipped)
        print(f"  bytes a skipped run adds to memory/: max {worst} B (target <= 16384)")
    later = [s for s in forced if s.number > 2]
    if later:
        worst = max(s.added for s in later)
        print(f"  bytes a forced run adds (unchanged domain): max {worst} B (target <= 131072)")
    print(f"  peak rss over all runs: {max(s.rss_mib for s in samples):7.1f} MiB (limit 768 MiB)")
    statuses = sorted({s.status for s in samples})
    print(f"  statuses: {', '.join(statuses)}")


def main(argv: list[str] | None = None) -> int:
    """Run both histories and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of the 3,000-task domain")
    parser.add_argument("--big-runs", type=int, default=12, help="runs of the 10,000-task one")
    parser.add_argument("--force-every", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        report(history(3000, args.runs, args.force_every, root, "3k"), 3000)
        big = history(10000, args.big_runs, args.force_every, root, "10k")
        report(big, 10000)
        points = sorted({1, 2, len(big) // 2, len(big)})
        figures = ", ".join(f"run {n}: {big[n - 1].rss_mib:.0f} MiB" for n in points)
        print(f"  10,000 tasks, peak rss along its history: {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
