"""`make bench` (the month): the items a person judges in a month, today and with the levers.

bench/grants_month.py asks a narrower question on the pure core alone, in a second. Here each
world (bench/month_world.py: the project's month; bench/relay_world.py: two teams, a larger
domain; bench/ops_world.py: an ops team whose two owners decide by written rules;
bench/support_world.py: a product and support team whose lead, her delegate and a decider of
decisions decide by written rules) seeds a real reference hub on 127.0.0.1, and each of 30
days: the team acts on the hub (a person's writes and events), `custodian run --force --llm
file:` runs on the scripted model's answer for the day, and the person decides every pending
item with `custodian approvals approve|reject`: approve unless harmful (bench/month_person.py),
or, in the ops and support worlds, as the rules of the person who decides the item say
(bench/ops_people.py, bench/support_people.py); there, each write Custodian makes on its own is
also judged by those rules on the hub the run saw, and one they reject is harmful.

Two arms per world, each on a fresh hub and memory, the same seed:
- today: the person follows no report; they decide every item (today's release: 135 in the
  project's month);
- with levers: once a week (day 4, 11, 18, 25) the person also reads `custodian policy report`
  and runs each command it prints exactly as printed (--by/--reason filled only where the line
  asks); a line that cannot run as printed is a finding.

With shares (the default; `--no-shares` skips them), one more arm per lever (bench/month_levers.py)
runs with every lever but that one, and the world prints each lever's share: the items judged
without it, less those with all of them.

The person's environment names the hub, the memory and the domain (STATE_HUB_URL,
CUSTODIAN_MEMORY_DIR, CUSTODIAN_DOMAIN), as a project's `.env` would: a printed command needs
nothing else. Checked after each arm (bench/month_audit.py): harmful writes executed, decisions
of a person overridden, proposals asked again on the same facts; each must be 0.

The clock: every command reads `custodian_runtime.clock.utc_now`, and a month cannot pass on
the wall clock, so the commands run in this process inside `simulated_clock`, which the hub
shares. Each run is forced so that every day runs, whatever the skip rule would say.

    python bench/grants_month_hub.py                      # both worlds, 30 days; exit 1 if unsafe
    python bench/grants_month_hub.py --world relay --days 5
    python bench/grants_month_hub.py --world ops --no-shares   # the third world, both arms
    python bench/grants_month_hub.py --world ops --no-shares --why   # and why each is asked
    python bench/grants_month_hub.py --world support --no-shares --seed 11   # the fourth world
    python bench/grants_month_hub.py --world month --no-shares --daily-until 7   # reads daily
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import month_world
import ops_world
import relay_world
import support_world
from month_audit import Landed, asked_again, landed, overridden, queue
from month_figures import Arm, print_world
from month_kit import Hands, SimClock, Words, World
from month_levers import LEVERS, switched_off
from month_person import Ledger, cli, decide_by_rule, decide_pending, follow_report

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.clock import simulated_clock

REPO = Path(__file__).resolve().parent.parent
WORLDS: dict[str, World] = {
    "month": month_world.WORLD,
    "relay": relay_world.WORLD,
    "ops": ops_world.WORLD,
    "support": support_world.WORLD,
}
READS_ON = 4  # the weekday (day % 7) the person reads the report: the first week's Friday


@contextmanager
def person_env(hub: str, memory: Path, domain: str) -> Iterator[None]:
    """The person's environment: the hub, memory and domain a project's `.env` names, and typed
    names allowed (the simulated people sign with `--by`)."""
    names = {"STATE_HUB_URL": hub, "CUSTODIAN_MEMORY_DIR": str(memory), "CUSTODIAN_DOMAIN": domain}
    names["CUSTODIAN_TYPED_NAMES"] = "1"
    before = {n: os.environ.get(n) for n in names}
    os.environ.update(names)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def one_day(world: World, hands: Hands, arm: Arm, day: int, seeded: set[str], root: Path) -> None:
    """Morning: the team, then (weekly) the report; 09:00 the run; 10:00 the person decides."""
    base = world.start + timedelta(days=day)
    hands.clock.set(base - timedelta(hours=1))
    world.team(hands, base, seeded, landed(root / "memory", world.domain))
    if arm.levers and (day % 7 == READS_ON or 0 < day < arm.daily_until):
        hands.clock.set(base - timedelta(minutes=30))
        follow_report(arm.ledger, day, arm.off.skips if arm.off else lambda _: False)
    hands.clock.set(base)
    seen = hands.summary() if world.judge else {}
    answer = root / "answer.md"
    answer.write_text(world.answer(hands.summary(), day, arm.seed, hands.words), "utf-8")
    code, out, _ = cli(
        "run", "--llm", f"file:{answer}", "--canon", str(REPO / "canon"), "--force", "--json"
    )
    arm.runs[f"exit {code}"] += 1
    summary = json.loads(out)
    arm.tally_run(summary)
    if code != 0:
        arm.ledger.findings.append(f"day {day}: run exit {code}: {summary.get('message')}")
    for item in summary.get("failed", []):
        said = " ".join(str(item.get("error") or item.get("reason")).split())
        arm.ledger.findings.append(f"day {day}: {item['operation']} failed: {said}"[:300])
    if world.judge and arm.against_rule is not None:
        arm.against_rule += against_rule(world, hands, seen, landed(root / "memory", world.domain))
    hands.clock.set(base + timedelta(hours=1))
    if world.judge:
        decide_by_rule(hands, arm.ledger, world.judge)
    else:
        decide_pending(hands, arm.ledger, world.harmful, world.reject_reason)


def against_rule(
    world: World, hands: Hands, seen: dict[str, Any], writes: list[Landed]
) -> list[str]:
    """Writes Custodian made on its own in this run that the deciding person's rule rejects, on
    the hub as it was before the run: harmful, in a world whose people decide by rules."""
    since = hands.clock.peek() - timedelta(hours=1)
    found = []
    for write in writes:
        if world.judge is None or not write.own or write.at < since:
            continue
        verdict = world.judge(write.operation, write.params, seen, hands.words, write.at)
        if not verdict.approve:
            found.append(f"{write.operation} {write.params} by {write.by}: {verdict.reason}")
    return found


def live_month(world: World, arm: Arm, root: Path, days: int) -> Arm:
    """`days` days of one arm against its own hub and memory; the arm, counted and audited."""
    db = root / "hub.sqlite3"
    data = world.seed()
    load_seed(db, data)
    seeded = {t["id"] for t in data["tasks"] if t["status"] == "blocked"}
    clock = SimClock(world.start - timedelta(hours=2))
    words = Words()
    with (
        switched_off(arm.off),
        simulated_clock(clock),
        ReferenceHub(db, clock=clock) as hub,
        httpx.Client(base_url=hub.url, timeout=30) as http,
        person_env(hub.url, root / "memory", world.domain),
    ):
        hands = Hands(http, world.domain, clock, words)
        for day in range(days):
            one_day(world, hands, arm, day, seeded, root)
        tasks = hands.tasks()
        _, grants, _ = cli("grants", "list", "--json")
    arm.grants = {g["id"]: g for g in json.loads(grants)}
    writes = landed(root / "memory", world.domain)
    arm.written = month_world.tally_journal(root / "memory", world.domain, world.harmful)
    arm.harmed_on_hub = world.harmed(tasks, {t["id"] for t in data["tasks"]})
    arm.overridden = overridden(words, writes)
    arm.asked_again = asked_again(queue(root / "memory", world.domain), words, writes)
    arm.reversals = words.reversals
    if world.judge is None:
        arm.against_rule = None
    return arm


def both_arms(
    world: World, root: Path, days: int, seed_value: int, shares: bool = False, daily: int = 0
) -> list[Arm]:
    """Today's arm and the arm with levers, each on a fresh hub and memory; with `shares`, one
    more arm per lever, with every lever but that one (bench/month_levers.py). With `daily`,
    the person with levers reads the report each morning before that day, not only weekly."""
    how = "the weekly report" if not daily else f"the report daily to day {daily - 1}, then weekly"
    arms = [
        Arm("today (no report followed)", levers=False, seed=seed_value, ledger=Ledger()),
        Arm(f"with levers ({how}, as printed)", True, seed_value, Ledger(), daily_until=daily),
    ]
    if shares:
        arms += [Arm(f"without: {x.name}", True, seed_value, Ledger(), off=x) for x in LEVERS]
    for n, arm in enumerate(arms):
        (root / world.name / str(n)).mkdir(parents=True)
        live_month(world, arm, root / world.name / str(n), days)
    return arms


def main(argv: list[str] | None = None) -> int:
    """Each world's two arms and their figures; exit 1 if any arm did what it must never do."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--world", choices=[*WORLDS, "all"], default="all")
    parser.add_argument(
        "--no-shares", action="store_true", help="skip the arms that switch each lever off"
    )
    parser.add_argument(
        "--why",
        action="store_true",
        help="print, per class still asked, the facts that part approvals from rejections",
    )
    parser.add_argument(
        "--daily-until",
        type=int,
        default=0,
        metavar="DAY",
        help="the person reads the report each morning before DAY, then weekly (what an "
        "earlier first report would save; the target is held against the weekly one)",
    )
    args = parser.parse_args(argv)
    for name in [n for n in os.environ if n.startswith(("CUSTODIAN_", "STATE_HUB_"))]:
        del os.environ[name]
    chosen = list(WORLDS.values()) if args.world == "all" else [WORLDS[args.world]]
    unsafe = []
    for world in chosen:
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)  # no .env of the checkout is read
            arms = both_arms(
                world, Path(tmp), args.days, args.seed, not args.no_shares, args.daily_until
            )
            os.chdir(REPO)
        unsafe += print_world(world, arms, args.days, args.why)
    if unsafe:
        print(f"!!! {'; '.join(unsafe)} !!!", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
