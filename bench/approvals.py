"""`make bench` (approvals part): does a run's cost grow with the decided items in the queue?

Two memories, each with its own reference hub seeded with the same demo data: one with an empty
approval queue, one with `--items` decided items of the domain (executed, rejected, expired,
failed and stale, decided over the last year). After one warm-up run each (the first run of a
memory builds its approval index), it runs `custodian run --force` with the offline model in
pairs, one process per run, alternating which memory goes first, and takes each process's CPU
time from os.wait4.

    python bench/approvals.py                      # 5,000 decided items, 15 pairs
    python bench/approvals.py --pairs 30 --sealed  # with CUSTODIAN_SEAL_KEY set

Target: the median per-pair ratio of CPU (decided / empty) at most 1.1x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_hub import ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.approvals import ApprovalItem, new_item
from custodian_runtime.core.plan import fingerprint
from custodian_runtime.core.seals import SealKey, seal_item

REPO = Path(__file__).resolve().parent.parent
CUSTODIAN = str(Path(sys.executable).parent / "custodian")
KEY = "bench-seal-key-" + "0" * 32
OUTCOMES = (
    "executed",
    "executed",
    "executed",
    "rejected",
    "rejected",
    "expired",
    "failed",
    "stale",
)


def decided_item(n: int, now: datetime) -> ApprovalItem:
    """The nth decided item: an outcome in turn, decided between 2 and 365 days ago."""
    params = {"workstream_id": "web-ws-1", "title": f"Follow-up number {n}"}
    fp = fingerprint("create_task", params)
    made = now - timedelta(days=2 + n % 364, hours=n % 24)
    item = new_item(
        approval_id=f"apr-{fp[:12]}",
        domain="website",
        operation="create_task",
        params=params,
        rationale=f"Proposed in run {n}.",
        run_id=f"r{n}",
        fingerprint=fp,
        precondition={"workstream": "web-ws-1", "same_title": []},
        now=made,
        ttl_days=14,
    )
    status = OUTCOMES[n % len(OUTCOMES)]
    if status == "expired":
        return item.model_copy(update={"status": "expired"})
    extra = {"reject_reason": "not this quarter"} if status == "rejected" else {}
    decided = {"status": status, "decided_at": made + timedelta(hours=2), "decided_by": "ana"}
    return item.model_copy(update={**decided, **extra})


def fill_queue(memory: Path, items: int, key: SealKey | None) -> None:
    """Write `items` decided item files as the store would (sealed with a key)."""
    folder = memory / "approvals"
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    for n in range(items):
        item = decided_item(n, now)
        if key is not None:
            text = seal_item(key, item).model_dump_json(indent=2)
        else:
            text = item.model_dump_json(indent=2, exclude={"seal"})
        (folder / f"{item.id}.json").write_text(text + "\n", encoding="utf-8")


def cpu_of_run(hub_url: str, memory: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one forced `custodian run` process, from wait4."""
    argv = [CUSTODIAN, "run", "--domain", "website", "--hub", hub_url, "--llm", "offline",
            "--memory", str(memory), "--canon", str(REPO / "canon"), "--force"]  # fmt: skip
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 5):
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise SystemExit(f"custodian run exited {child.returncode}: {tail}")
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    """Measure and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="decided items in the full queue")
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--sealed", action="store_true", help="set CUSTODIAN_SEAL_KEY")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB_"))}
    key = SealKey(KEY) if args.sealed else None
    if key is not None:
        env["CUSTODIAN_SEAL_KEY"] = KEY
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fill_queue(root / "full", args.items, key)
        dataset = demo_dataset(datetime.now(UTC))
        for name in ("empty", "full"):
            load_seed(root / f"hub-{name}.sqlite3", dataset)
        with (
            ReferenceHub(root / "hub-empty.sqlite3") as h0,
            ReferenceHub(root / "hub-full.sqlite3") as h1,
        ):
            hubs = {"empty": h0.url, "full": h1.url}
            for name in ("empty", "full"):  # warm-up: the first run builds the index
                warm = cpu_of_run(hubs[name], root / name, env)
                print(f"  warm-up {name:5}: cpu {warm:6.3f} s", file=sys.stderr)
            report(measure(hubs, root, env, args.pairs), args.items, key is not None)
    return 0


def measure(
    hubs: dict[str, str], root: Path, env: dict[str, str], pairs: int
) -> list[tuple[float, float]]:
    """`pairs` (empty, full) CPU figures, the order alternating from pair to pair."""
    found = []
    for n in range(pairs):
        order = ("empty", "full") if n % 2 == 0 else ("full", "empty")
        cpu = {name: cpu_of_run(hubs[name], root / name, env) for name in order}
        found.append((cpu["empty"], cpu["full"]))
    return found


def report(samples: list[tuple[float, float]], items: int, sealed: bool) -> None:
    """The medians and the per-pair ratio."""
    empty = statistics.median(e for e, _ in samples)
    full = statistics.median(f for _, f in samples)
    ratios = sorted(f / e for e, f in samples)
    seal = ", sealed" if sealed else ""
    print(f"approval queue: {len(samples)} pairs of forced runs{seal}")
    print(f"  empty queue:              median cpu {empty:6.3f} s")
    print(f"  {items:,} decided items:    median cpu {full:6.3f} s")
    print(
        f"  ratio per pair: median {statistics.median(ratios):4.2f}x "
        f"(min {ratios[0]:4.2f}x, max {ratios[-1]:4.2f}x; target <= 1.10x)"
    )


if __name__ == "__main__":
    sys.exit(main())
