"""`make bench`: speed and memory figures for the parts a run spends its time in, and the prompt's.

Prints one line per figure. Nothing here asserts a target: the numbers are for people to compare
between changes. Everything runs on loopback and in temporary directories. The prompt figures
(bench/prompt_figures.py) are counted with the cl100k tokenizer.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import prompt_figures

from custodian_hub import ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings

REPO = Path(__file__).resolve().parent.parent


def timed(label: str, repeat: int, action: Callable[[], object]) -> None:
    """Run `action` `repeat` times; print the median and 95th percentile in milliseconds."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
    print(
        f"{label:48} median {statistics.median(samples):8.2f} ms   p95 {p95:8.2f} ms   n={repeat}"
    )


def big_plan(summary: DomainSummary, items: int) -> str:
    """A plan with `items` items mixing every section, for the decision core."""
    task_ids = [t.id for ws in summary.workstreams for t in ws.tasks]
    ws_ids = [ws.id for ws in summary.workstreams]
    plan = {
        "observations": [f"observation {n}" for n in range(20)],
        "progress_events": [
            {
                "workstream_id": ws_ids[n % len(ws_ids)],
                "event_type": "note",
                "rests_on": [task_ids[n % len(task_ids)]],
                "summary": f"e{n}",
            }
            for n in range(items // 4)
        ],
        "tasks_to_update": [
            {"task_id": task_ids[n % len(task_ids)], "status": "done"} for n in range(items // 4)
        ],
        "tasks_to_flag": [
            {"task_id": task_ids[n % len(task_ids)], "note": f"n{n}"} for n in range(items // 4)
        ],
        "proposals": [
            {"operation": "create_task", "params": {"workstream_id": ws_ids[0], "title": f"t{n}"}}
            for n in range(items // 4)
        ],
    }
    return "Prose.\n\n```json\n" + json.dumps(plan) + "\n```\n"


def main() -> int:
    """Print every figure."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = root / "hub.sqlite3"
        load_seed(db, demo_dataset(datetime.now(UTC)))
        with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
            timed(
                "hub GET /domains/website/summary",
                200,
                lambda: http.get("/domains/website/summary").raise_for_status(),
            )
            timed(
                "hub GET /state/summary", 200, lambda: http.get("/state/summary").raise_for_status()
            )
            summary = DomainSummary.model_validate(http.get("/domains/website/summary").json())
            for size in (40, Limits().max_plan_items):  # the most one plan may hold
                text = big_plan(summary, size)
                timed(
                    f"extract_plan + authorize, {size} items",
                    50,
                    lambda t=text: authorize(extract_plan(t), summary),
                )
            store = JournalStore(root / "memory")
            writer = store.writer("website", "bench", lambda: datetime.now(UTC))
            timed("journal append (fsync'd)", 200, lambda: writer.append("prompt", {"system": "s"}))
            timed("journal read + verify, ~200 records", 20, lambda: store.scan("website"))
            settings = load_settings(
                {
                    "domain": "website",
                    "hub": hub.url,
                    "llm": "offline",
                    "force": True,
                    "memory": str(root / "run-memory"),
                    "canon": str(REPO / "canon"),
                },
                {},
                root,
            )
            tracemalloc.start()
            timed(
                "whole offline run (observe..note), website",
                10,
                lambda: run(settings, stderr=io.StringIO()),
            )
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"{'peak Python memory over those runs':48} {peak / 1e6:8.2f} MB")
        prompt_figures.main(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
