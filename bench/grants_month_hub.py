"""`make bench` (grants part): a person's decisions in a month, end to end, with and without grants.

bench/grants_month.py asks the same on the pure core alone (no hub, journal or commands), in a
second. Here a real reference hub on 127.0.0.1 is seeded with one domain (`month`: 32 tasks over
4 workstreams, some stale, blocked or done; bench/month_world.py). Each of 30 days: the team
unblocks each task Custodian blocked three days before (a person's write on the hub); with
grants, the person reads `custodian policy report --json` and runs each suggested `custodian
grants issue`, --by and --reason filled, when no live grant of that operation is left (so one
used up or expired is renewed); `custodian run --domain month --force --llm file:` runs on the
scripted model's answer for the day; the person decides every pending item with `custodian
approvals approve|reject`: approve unless harmful.

Harmful (as in bench/grants_month.py): a write that sets a task to `cancelled`; the model
proposes one every fifth day and the person rejects each. The person issues each suggested
grant exactly as the report words it: the report narrows it (`--where`) to the params every
approved proposal shared (`status=blocked`), and suggests none that would cover a proposal the
person rejected (core/standing/agreement.py). Harmful writes are counted from the journal
(`authorized`, then a `receipt`) and the hub's final tasks.

The clock: every command reads `custodian_runtime.clock.utc_now`, and a month cannot pass on the
wall clock, so the commands run in this process (`custodian_runtime.cli.main`, the argv a person
types) inside `simulated_clock`, which the hub shares; not as separate processes. Each run is
forced so that every day runs, whatever the skip rule would say.

    python bench/grants_month_hub.py                 # 30 days, both arms; exit 1 if harmful
    python bench/grants_month_hub.py --days 3
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import sys
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from month_world import DOMAIN, START, SimClock, answer, harmful, seed, tally_journal

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.cli import main as custodian
from custodian_runtime.clock import simulated_clock

REPO = Path(__file__).resolve().parent.parent
PERSON = ("--by", "ana")
DEFERRED = "status is a person's decision"


@dataclass
class Arm:
    """One arm of the month: what the person did, and the figures found at the end."""

    name: str
    grants: bool
    decided: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)
    written: Counter[str] = field(default_factory=Counter)
    granted: Counter[str] = field(default_factory=Counter)
    cancelled_on_hub: int = 0

    @property
    def decisions(self) -> int:
        """The person's decisions: approvals, rejections and grants issued."""
        return self.decided["approve"] + self.decided["reject"] + self.decided["issue"]


@dataclass
class Month:
    """Where one arm lives: its hub, memory, model answer and clock."""

    hub: str
    http: httpx.Client
    memory: Path
    answer: Path
    clock: SimClock
    seed: int

    def cli(self, *argv: str) -> tuple[int, str]:
        """One `custodian` command in this process: its exit code and stdout."""
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = custodian(list(argv))
        return code, out.getvalue()

    def summary(self) -> dict[str, Any]:
        """The domain as the hub answers it."""
        response = self.http.get(f"/domains/{DOMAIN}/summary", params={"events": 200})
        response.raise_for_status()
        return dict(response.json())


def team_unblocks(month: Month, morning: datetime, seeded: set[str]) -> None:
    """The team sets a task Custodian blocked back to in_progress three days later."""
    cutoff = (morning - timedelta(days=3)).date().isoformat()
    for ws in month.summary()["workstreams"]:
        for task in ws["tasks"]:
            mine = task["status"] == "blocked" and task["id"] not in seeded
            if mine and task["updated_at"][:10] <= cutoff:
                month.http.patch(f"/tasks/{task['id']}", json={"status": "in_progress"})


def person_grants(month: Month, arm: Arm) -> None:
    """Run each suggested `grants issue` whose operation has no live grant left."""
    _, out = month.cli(
        "policy", "report", "--domain", DOMAIN, "--memory", str(month.memory), "--json"
    )
    _, listed = month.cli(
        "grants", "list", "--domain", DOMAIN, "--memory", str(month.memory), "--json"
    )
    live = {g["operation"] for g in json.loads(listed) if g["state"] == "live"}
    for row in json.loads(out)["operations"]:
        suggested = row["suggest"] or ""
        if not suggested.startswith("custodian grants issue") or row["operation"] in live:
            continue
        argv = [w for w in shlex.split(suggested)[1:] if w not in ("NAME", "TEXT")]
        argv = [_filled(w) for w in argv]
        code, _ = month.cli(*argv, "--hub", month.hub, "--memory", str(month.memory))
        arm.decided["issue" if code == 0 else f"issue exit {code}"] += 1
        where = [f"{k}={v}" for k, v in row["where"].items()]
        arm.granted[" ".join([row["operation"], *where])] += 1


def _filled(word: str) -> str:
    return {"--by": "--by=ana", "--reason": "--reason=agreement report, narrowed"}.get(word, word)


def person_decides(month: Month, arm: Arm) -> None:
    """Decide every pending item: reject the harmful ones, approve the rest."""
    _, out = month.cli(
        "approvals",
        "--memory",
        str(month.memory),
        "list",
        "--domain",
        DOMAIN,
        "--status",
        "pending",
        "--json",
    )
    for item in json.loads(out):
        if harmful(item["operation"], item["params"]):
            month.cli(
                "approvals",
                "--memory",
                str(month.memory),
                "reject",
                item["id"],
                *PERSON,
                "--reason",
                "cancelling is the team's call",
            )
            arm.decided["reject"] += 1
        else:
            code, _ = month.cli(
                "approvals",
                "--memory",
                str(month.memory),
                "approve",
                item["id"],
                *PERSON,
                "--hub",
                month.hub,
            )
            arm.decided["approve"] += 1
            arm.decided[f"approve exit {code}"] += code != 0


def one_day(month: Month, arm: Arm, day: int, seeded: set[str]) -> None:
    """Morning: the team, then the person's grants; 09:00 the run; 10:00 the person decides."""
    base = START + timedelta(days=day)
    month.clock.set(base - timedelta(hours=1))
    team_unblocks(month, base, seeded)
    if arm.grants:
        month.clock.set(base - timedelta(minutes=30))
        person_grants(month, arm)
    month.clock.set(base)
    month.answer.write_text(answer(month.summary(), day, month.seed), encoding="utf-8")
    code, out = month.cli(
        "run",
        "--domain",
        DOMAIN,
        "--hub",
        month.hub,
        "--llm",
        f"file:{month.answer}",
        "--memory",
        str(month.memory),
        "--canon",
        str(REPO / "canon"),
        "--force",
        "--json",
    )
    arm.runs[f"exit {code}"] += 1
    summary = json.loads(out)
    for outcome, n in summary.get("counts", {}).items():
        arm.runs[outcome] += n
    # The deference rule's words (core/authority/budgets.py): a grant never skips it.
    arm.runs["deferred"] += sum(DEFERRED in q["reason"] for q in summary.get("queued", []))
    month.clock.set(base + timedelta(hours=1))
    person_decides(month, arm)


def live_month(arm: Arm, root: Path, days: int, seed_value: int) -> Arm:
    """Thirty (or `days`) days of one arm against its own hub and memory; the arm, counted."""
    db = root / "hub.sqlite3"
    data = seed()
    load_seed(db, data)
    seeded = {t["id"] for t in data["tasks"] if t["status"] == "blocked"}
    clock = SimClock(START - timedelta(hours=2))
    with (
        simulated_clock(clock),
        ReferenceHub(db, clock=clock) as hub,
        httpx.Client(base_url=hub.url, timeout=30) as http,
    ):
        month = Month(hub.url, http, root / "memory", root / "answer.md", clock, seed_value)
        for day in range(days):
            one_day(month, arm, day, seeded)
        final = month.summary()
    arm.written = tally_journal(root / "memory")
    tasks = [t for ws in final["workstreams"] for t in ws["tasks"]]
    arm.cancelled_on_hub = sum(t["status"] == "cancelled" for t in tasks)
    return arm


def report(arm: Arm, days: int) -> None:
    """The arm's figures."""
    d, w, r = arm.decided, arm.written, arm.runs
    odd = {k: v for k, v in {**d, **r}.items() if " exit " in f" {k}" and k != "exit 0" and v}
    print(f"{arm.name}: {days} daily `custodian run`s")
    print(
        f"  person's decisions  {arm.decisions:4}  (approve {d['approve']}, reject "
        f"{d['reject']}, grants issued {d['issue']})"
    )
    if arm.granted:
        grants = ", ".join(f"{what} x{n}" for what, n in sorted(arm.granted.items()))
        print(f"  grants issued       {grants}")
    print(
        f"  writes executed     by policy {w['policy']}, by person {w['person']}, "
        f"by grant {w['grant']}  (journal: authorized with a receipt)"
    )
    print(
        f"  harmful executed    {w['harmful']} in the journal, {arm.cancelled_on_hub} "
        f"tasks cancelled on the hub"
    )
    print(
        f"  run items           executed {r['executed']}, queued {r['queued']} ({r['deferred']} "
        f"deferred to a person's decision on the task), denied "
        f"{r['denied']}, stale {r['stale']}{f'; exits {odd}' if odd else ''}"
    )


def both_arms(root: Path, days: int, seed_value: int) -> list[Arm]:
    """Arm A without grants, arm B with the suggested grants, each on a fresh hub and memory."""
    arms = [Arm("A, without grants", grants=False), Arm("B, with the suggested grants", True)]
    for n, arm in enumerate(arms):
        (root / str(n)).mkdir()
        live_month(arm, root / str(n), days, seed_value)
    return arms


def main(argv: list[str] | None = None) -> int:
    """Both arms; the figures; exit 1 if any harmful write was executed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    for name in [n for n in os.environ if n.startswith(("CUSTODIAN_", "STATE_HUB_"))]:
        del os.environ[name]
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # no .env of the checkout is read
        arms = both_arms(Path(tmp), args.days, args.seed)
        os.chdir(REPO)
    for arm in arms:
        report(arm, args.days)
    a, b = arms
    print(f"ratio of the person's decisions B/A: {b.decisions / max(a.decisions, 1):.2f}")
    harm = [arm.name for arm in arms if arm.written["harmful"] or arm.cancelled_on_hub]
    if harm:
        print(f"!!! HARMFUL WRITES EXECUTED in {', '.join(harm)} !!!", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
