"""`make bench` (approvals part): does a run's cost grow with the decided items in the queue?

Three memories, each with its own reference hub seeded with the same demo data: one with an
empty approval queue; `old`, with `--items` decided items of the domain (executed, rejected,
expired, failed and stale) all decided more than 30 days ago, so none is shown in the prompt;
and `mixed`, the same number decided over the last year, so about 100 rejections of the last 30
days are in the prompt (as they should be). After one warm-up run each (the first run of a
memory builds its approval index), it runs `custodian run --force` with the offline model in
groups, one process per run, rotating which memory goes first, and takes each process's CPU
time from os.wait4.

    python bench/approvals.py                      # 5,000 decided items, 12 groups
    python bench/approvals.py --groups 30 --sealed  # with CUSTODIAN_SEAL_KEY set

Target: the median per-group ratio of CPU (decided / empty) at most 1.1x.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_hub import ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.approvals.seals import seal_item
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.plan.extract import fingerprint

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


def decided_item(n: int, now: datetime, first_day: int) -> ApprovalItem:
    """The nth decided item: an outcome in turn, decided between `first_day` and 365 days ago."""
    params = {"workstream_id": "web-ws-1", "title": f"Follow-up number {n}"}
    fp = fingerprint("create_task", params)
    made = now - timedelta(days=first_day + n % (366 - first_day), hours=n % 24)
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


def fill_queue(memory: Path, items: int, key: SealKey | None, first_day: int = 2) -> None:
    """Write `items` decided item files as the store would (sealed with a key)."""
    folder = memory / "approvals"
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    for n in range(items):
        item = decided_item(n, now, first_day)
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


MEMORIES = ("empty", "old", "mixed")


def main(argv: list[str] | None = None) -> int:
    """Measure and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="decided items in a full queue")
    parser.add_argument("--groups", type=int, default=12)
    parser.add_argument("--sealed", action="store_true", help="set CUSTODIAN_SEAL_KEY")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB_"))}
    key = SealKey(KEY) if args.sealed else None
    if key is not None:
        env["CUSTODIAN_SEAL_KEY"] = KEY
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fill_queue(root / "old", args.items, key, first_day=32)
        fill_queue(root / "mixed", args.items, key)
        dataset = demo_dataset(datetime.now(UTC))
        for name in MEMORIES:
            load_seed(root / f"hub-{name}.sqlite3", dataset)
        with contextlib.ExitStack() as stack:
            hubs = {
                name: stack.enter_context(ReferenceHub(root / f"hub-{name}.sqlite3")).url
                for name in MEMORIES
            }
            for name in MEMORIES:  # warm-up: the first run builds the index
                warm = cpu_of_run(hubs[name], root / name, env)
                print(f"  warm-up {name:5}: cpu {warm:6.3f} s", file=sys.stderr)
            report(measure(hubs, root, env, args.groups), args.items, key is not None)
    return 0


def measure(
    hubs: dict[str, str], root: Path, env: dict[str, str], groups: int
) -> list[dict[str, float]]:
    """`groups` CPU figures per memory, the order rotating from group to group."""
    found = []
    for n in range(groups):
        order = MEMORIES[n % 3 :] + MEMORIES[: n % 3]
        found.append({name: cpu_of_run(hubs[name], root / name, env) for name in order})
    return found


def report(samples: list[dict[str, float]], items: int, sealed: bool) -> None:
    """The medians and the per-group ratios."""
    seal = ", sealed" if sealed else ""
    print(f"approval queue: {len(samples)} groups of forced runs{seal}")
    empty = statistics.median(s["empty"] for s in samples)
    print(f"  empty queue:                       median cpu {empty:6.3f} s")
    labels = {"old": "decided > 30 days ago", "mixed": "decided over a year"}
    for name in ("old", "mixed"):
        full = statistics.median(s[name] for s in samples)
        ratios = sorted(s[name] / s["empty"] for s in samples)
        print(
            f"  {items:,} {labels[name]:22}: median cpu {full:6.3f} s; ratio per group: median "
            f"{statistics.median(ratios):4.2f}x (min {ratios[0]:4.2f}x, max {ratios[-1]:4.2f}x;"
            " target <= 1.10x)"
        )


if __name__ == "__main__":
    sys.exit(main())
