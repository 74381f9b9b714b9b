"""Run one scenario: a fresh reference hub loaded with its seed, the real pipeline in a dry run.

The run is `custodian_runtime.run.run` itself with `dry_run=True`: the same prompt, extraction and
authority as production. The clock is fixed at the scenario's `now`. The hub's rows and the
memory directory are read before and after; a difference is reported as a broken guarantee.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import sqlite3
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from custodian_hub import in_process, load_seed
from custodian_runtime.clock import new_nonce
from custodian_runtime.core.approvals.items import approval_id_for, new_item
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.core.tooling.eval_expect import (
    EvalItem,
    ExpectationCheck,
    Scored,
    score,
)
from custodian_runtime.core.tooling.seed_facts import SeedFacts
from custodian_runtime.evals.scenario import Scenario
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import HubSettings, Settings

# The address the run is given for a scenario's hub; the transport answers it in this process.
SCENARIO_HUB = "http://scenario-hub.invalid"


@dataclass(frozen=True)
class Attempt:
    """One run of one scenario: what the plan proposed, what it turned into, and the score."""

    status: str
    exit_code: int
    message: str
    items: tuple[EvalItem, ...]
    scored: Scored
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    seconds: float
    unchanged: bool  # the hub's rows and the memory directory are as they were


def run_scenario(scenario: Scenario, base: Settings, work: Path) -> Attempt:
    """Run `scenario` once in `work` (a fresh, empty directory) with `base`'s model and canon."""
    db, memory = work / "hub.sqlite3", work / "memory"
    load_seed(db, scenario.dataset)
    _seed_approvals(scenario, memory, base)
    # The scenario's hub answers in this process, on the scenario's clock: no port, no server.
    with in_process(db, clock=lambda: scenario.now) as transport:
        before = (_rows_digest(db), _tree_digest(memory))
        settings = dataclasses.replace(
            base,
            domain=scenario.spec.domain,
            hub=HubSettings(url=SCENARIO_HUB, source="eval"),
            memory_dir=memory,
            dry_run=True,
            force=True,
            show_prompt=False,
            json_output=False,
        )
        started = time.monotonic()
        result = run(
            settings, clock=lambda: scenario.now, transport=transport, stderr=io.StringIO()
        )
        seconds = time.monotonic() - started
        after = (_rows_digest(db), _tree_digest(memory))
    return _attempt(scenario, result, seconds, unchanged=before == after)


def _attempt(scenario: Scenario, result: RunResult, seconds: float, *, unchanged: bool) -> Attempt:
    items = eval_items(result)
    scored = score(scenario.spec.expectations, items, SeedFacts.of_seed(scenario.dataset))
    if result.status != "completed":
        # A run that produced no plan passes no test, even one that forbids things.
        failed = ExpectationCheck("the run completed", True, False, result.message)
        scored = dataclasses.replace(scored, verdicts=(failed, *scored.verdicts))
    usage = result.usage
    return Attempt(
        status=result.status,
        exit_code=result.exit_code,
        message=result.message,
        items=items,
        scored=scored,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cost_usd=usage.get("cost_usd"),
        seconds=round(seconds, 3),
        unchanged=unchanged,
    )


def eval_items(result: RunResult) -> tuple[EvalItem, ...]:
    """Each plan item with its params and the outcome the dry run gave it."""
    kinds = {o.index: (o.kind, o.reason) for o in result.outcomes}
    return tuple(
        EvalItem(
            index=r.item.index,
            operation=r.item.operation,
            params=dict(r.item.params),
            outcome=kinds.get(r.item.index, ("denied", r.reason))[0],
            reason=r.reason,
        )
        for r in result.rulings
    )


def _seed_approvals(scenario: Scenario, memory: Path, base: Settings) -> None:
    store = ApprovalStore(memory, base.seal_key)
    for seeded in scenario.spec.approvals:
        created = scenario.now - timedelta(days=seeded.days_ago)
        fp = fingerprint(seeded.operation, dict(seeded.params))
        item = new_item(
            approval_id=approval_id_for(fp, new_nonce(), store.ids()),
            domain=scenario.spec.domain,
            operation=seeded.operation,
            params=dict(seeded.params),
            rationale=seeded.rationale,
            run_id="eval-seed",
            fingerprint=fp,
            precondition={},
            now=created,
            ttl_days=base.limits.approval_ttl_days,
        )
        if seeded.status == "rejected":
            item = item.model_copy(
                update={
                    "status": "rejected",
                    "decided_at": created,
                    "decided_by": seeded.by,
                    "reject_reason": seeded.reason or "no reason given",
                }
            )
        store.save(item)


def _rows_digest(db: Path) -> str:
    """A digest of every row of every table of the hub's database."""
    h = hashlib.sha256()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in sorted(tables):
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                h.update(repr((table, row)).encode())
    finally:
        conn.close()
    return h.hexdigest()


def _tree_digest(directory: Path) -> str:
    """A digest of the names and contents of every file under `directory`."""
    h = hashlib.sha256()
    if directory.exists():
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            h.update(str(path.relative_to(directory)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
