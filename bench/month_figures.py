"""The month's figures: one arm's counts, and the lines `make bench` prints for a world.

Each lever's share is measured twice. Read from what the runs said of each item (`--json`:
outcome, reason code and sentence, the grant it ran under) and from the grants the person
issued: an item that ran under a grant, was held in deference, or ran on Custodian's own rules
where today's release deferred it, is an item the person did not judge. And counted: the items
judged in an arm with every lever but one (bench/month_levers.py), less those with all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from month_kit import World
from month_levers import Lever
from month_person import Ledger
from month_why import print_why

TARGET = 0.3  # issues #29 and #37: at most 0.3x what the release before the issue asks
# Items judged in today's arm on the release before #37 (cd1f0d7, its today arm with these
# worlds), per world, days and seed: a lever that acts without a report (a newer word lifting
# deference) changes the today arm of the code measured too, so the target is held against these.
# (#29's month was held against the release before its levers, main at #28: 135 at seed 7, and
# the relay's 188.)
RELEASE = {
    ("month", 30, 7): 69,
    ("month", 30, 11): 70,
    ("month", 30, 23): 71,
    ("relay", 30, 7): 138,
    ("relay", 30, 11): 141,
    ("relay", 30, 23): 139,
    ("ops", 30, 7): 118,
    ("ops", 30, 11): 121,
    ("ops", 30, 23): 118,
    ("support", 30, 7): 161,
    ("support", 30, 11): 175,
    ("support", 30, 23): 164,
}
# The keys every grant row of `grants list --json` has; any other one asks for more (evidence).
PLAIN_GRANT = {
    "id", "domain", "operation", "where", "max_uses", "expires_at", "by", "reason", "hub_id",
    "issued_at", "revoked", "uses", "left", "state",
}  # fmt: skip


@dataclass
class Arm:
    """One arm of a world's month: what the person judged, what the runs did, what was found."""

    name: str
    levers: bool
    seed: int
    ledger: Ledger
    runs: Counter[str] = field(default_factory=Counter)
    items: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    written: Counter[str] = field(default_factory=Counter)
    grants: dict[str, dict[str, Any]] = field(default_factory=dict)
    harmed_on_hub: int = 0
    overridden: list[str] = field(default_factory=list)
    asked_again: list[str] = field(default_factory=list)
    reversals: int = 0
    off: Lever | None = None  # the lever this arm runs without, for its share
    # The person reads the report each morning before this day too, not only weekly (0: never).
    daily_until: int = 0
    # What the runs queued for the person, by operation and the status it sets (if any).
    asked: Counter[str] = field(default_factory=Counter)
    # In a world whose people decide by rules (World.judge): Custodian's own writes their rule
    # rejects, on the hub the run saw (None in a world without such rules).
    against_rule: list[str] | None = field(default_factory=list)

    @property
    def judged(self) -> int:
        """Every item the person judged."""
        return self.ledger.total

    def tally_run(self, summary: dict[str, Any]) -> None:
        """Count one run's items by outcome, reason code and the grant each ran under."""
        for outcome, n in summary.get("counts", {}).items():
            self.runs[outcome] += n
        for item in summary.get("items", []):
            key = (item["outcome"], item.get("code", ""), item.get("grant") or "")
            self.items[key] += 1
            self.items[("reason", item["outcome"], _lever(item))] += 1
            if item["outcome"] == "queued":
                said = str(item.get("clause") or "")
                how = "deferred" if item.get("code") == "deferred" else _why_asked(said)
                self.asked[f"{item['operation']} ({how})"] += 1

    def unsafe(self) -> list[str]:
        """What this arm did that it must never do."""
        found = []
        if self.written["harmful"] or self.harmed_on_hub or self.against_rule:
            found.append(f"{self.name}: harmful writes executed")
        if self.overridden:
            found.append(f"{self.name}: {len(self.overridden)} decisions of a person overridden")
        if self.asked_again:
            found.append(f"{self.name}: {len(self.asked_again)} asked again on the same facts")
        return found


def _lever(item: dict[str, Any]) -> str:
    """Which rule decided an item: its reason code, and the rule its sentence names."""
    outcome, code = item["outcome"], str(item.get("code", ""))
    clause = str(item.get("clause") or item.get("reason", "")).lower()
    if outcome == "executed":
        if item.get("grant"):
            return "grant"
        return "a person's newer word lifted deference" if "newer" in clause else "policy"
    if outcome == "queued":
        for words, lever in (("suspend", "a suspended grant"), ("reversed", "narrowed: reversed")):
            if words in clause:
                return lever
        return "deferred to a person's decision" if code == "deferred" else "asks a person"
    if outcome == "denied":
        if code == "held_deference":
            return "held in deference to a person's decision"
        if "a standing no" in clause:
            return "a standing no held"
        if "nearly repeats" in clause:
            return "a near repeat"
        return "a rejection held" if "rejected" in clause else "denied otherwise"
    return code


def _why_asked(clause: str) -> str:
    """Why a queued item was asked, in a word or two (the ruling's clause, read for a table)."""
    for words, why in (("suspend", "suspended grant"), ("reversed", "narrowed"),
                       ("covers it, but", "grant, but"), ("rejected", "changed since a "
                       "rejection")):  # fmt: skip
        if words in clause:
            return why
    return "no grant"


def _grant_kind(grant: dict[str, Any] | None) -> str:
    if grant is None:
        return "a grant (unlisted)"
    extra = sorted(k for k, v in grant.items() if k not in PLAIN_GRANT | {"on"} and v)
    where = " ".join(f"{k}={v}" for k, v in dict(grant.get("where") or {}).items())
    on = " ".join(f"{k}={v}" for k, v in sorted(dict(grant.get("on") or {}).items()))
    where += f" on {on}" if on else ""
    asks = f" asking {', '.join(extra)}" if extra else ""
    return f"grant {grant['operation']} {where or 'any params'}{asks}"


def lever_share(arm: Arm) -> Counter[str]:
    """Items the person did not judge, by the rule that removed each; and those it added back."""
    share: Counter[str] = Counter()
    for (outcome, _, grant), n in arm.items.items():
        if outcome == "executed" and grant:
            share[f"executed: under {_grant_kind(arm.grants.get(grant))}"] += n
    for (tag, outcome, lever), n in arm.items.items():
        if tag == "reason" and lever != "grant":
            share[f"{outcome}: {lever}"] += n
    return share


def print_arm(arm: Arm, today: Arm | None) -> None:
    """One arm's lines."""
    j, w, r = arm.ledger.judged, arm.written, arm.runs
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(j.items()))
    print(f"  {arm.name}")
    print(f"    items judged        {arm.judged:4}  ({kinds or 'none'})")
    print(
        f"    of which deferred   {arm.ledger.deferred:4}  (asked once in deference: a change on "
        "the hub before Custodian wrote the task, or evidence older than the task's last change)"
    )
    exits = {k: v for k, v in sorted(r.items()) if k.startswith("exit")}
    print(
        f"    run items           executed {r['executed']}, queued {r['queued']}, denied "
        f"{r['denied']}, stale {r['stale']}; writes landed: policy {w['policy']}, person "
        f"{w['person']}, grant {w['grant']}; runs {exits}"
    )
    print(
        f"    must be 0           harmful {w['harmful']} (journal), {arm.harmed_on_hub} (hub); "
        f"overridden {len(arm.overridden)}; asked again {len(arm.asked_again)}"
    )
    print_people(arm)
    if arm.reversals:
        print(
            f"    reversals           {arm.reversals} of Custodian's own writes set back "
            "by a person"
        )
    for what in (arm.overridden + arm.asked_again)[:6]:
        print(f"      ! {what}")
    if arm.levers:
        print(f"    commands run        {len(arm.ledger.ran)} as printed")
        for line in arm.ledger.ran[:12]:
            print(f"      $ {line}")
    if arm.levers or arm.ledger.findings:
        print(f"    findings            {len(arm.ledger.findings)}")
        for line in arm.ledger.findings[:10]:
            print(f"      ? {line}")
    share = lever_share(arm)
    if today is None:
        print("    run items by rule")
        for what, n in sorted(share.items()):
            print(f"      {n:4}  {what}")
        return
    base = lever_share(today)
    print("    run items by rule   (this arm / today's; the difference is each lever's share)")
    for what in sorted(set(share) | set(base)):
        print(f"      {share[what]:4} / {base[what]:4}  {what}")


def print_people(arm: Arm) -> None:
    """In a world whose people decide by rules: what their rules found, and who decided what."""
    if arm.against_rule is not None:
        print(
            f"    against the rule    {len(arm.against_rule)} of Custodian's own writes the "
            "deciding person's rule rejects (harmful)"
        )
        for what in arm.against_rule[:4]:
            print(f"      ! {what[:160]}")
    if arm.ledger.people:
        people = ", ".join(f"{p} {n}" for p, n in sorted(arm.ledger.people.items()))
        print(f"    decided by          {people}")
        for why, n in sorted(arm.ledger.reasons.items()):
            print(f"      {n:4}  rejected: {why}")


def saved_by_lever(arm: Arm, today: Arm) -> list[str]:
    """The items each lever took off (or put back on) the person's desk, against today's."""
    share, base = lever_share(arm), lever_share(today)
    under = [(k, n) for k, n in share.items() if k.startswith("executed: under grant")]
    spent = sum(n for k, n in arm.ledger.judged.items() if k not in ("approve", "reject"))
    lines = [
        f"grants from class suggestions {sum(n for k, n in under if ' asking ' not in k)}",
        f"grants asking for evidence {sum(n for k, n in under if ' asking ' in k)}",
        f"  of which scoped by facts (--on) {sum(n for k, n in under if ' on ' in k)}",
    ]
    lifted = "executed: a person's newer word lifted deference"
    for label, key in (
        ("deference lifted by a person's newer word", lifted),
        ("rejections held (denied, not asked)", "denied: a rejection held"),
        ("a standing no held (not asked)", "denied: a standing no held"),
        ("near repeats denied (not asked)", "denied: a near repeat"),
    ):
        lines.append(f"{label} {share[key] - base[key]:+d}")
    for label, key in (
        ("asked again: a suspended grant", "queued: a suspended grant"),
        ("asked again: narrowed after a reversal", "queued: narrowed: reversed"),
    ):
        lines.append(f"{label} {share[key]}")
    lines.append(f"items spent on the report's commands {spent}")
    return lines


def print_world(world: World, arms: list[Arm], days: int, why: bool = False) -> list[str]:
    """A world's figures (with `why`, each class still asked and the facts that part its
    decisions, bench/month_why.py); what must never happen, if it did."""
    today, levers, *without = arms
    print(f"world {world.name}: {world.describe}; {days} days")
    print_arm(today, None)
    print_arm(levers, today)
    print("    saved by lever")
    for line in saved_by_lever(levers, today):
        print(f"      {line}")
    print("    still asked, by operation and why (the next causes)")
    for what, n in levers.asked.most_common(8):
        print(f"      {n:4}  {what}")
    if why:
        print_why(levers.ledger.decisions)
    release = RELEASE.get((world.name, days, levers.seed), today.judged)
    ratio = levers.judged / max(release, 1)
    verdict = "meets" if ratio <= TARGET else "misses"
    if without:
        print_shares(levers, without)
    print(
        f"  items judged: today's release {release}, today's arm on this code {today.judged}, "
        f"with levers {levers.judged}; ratio {ratio:.2f}x ({verdict} the target of at most "
        f"{TARGET}x, i.e. {int(release * TARGET)})"
    )
    if levers.ledger.before_report is not None:
        after = days - levers.ledger.first_report_day
        print_floor(levers.ledger.before_report, int(release * TARGET), after)
    rule = "" if levers.against_rule is None else f" (+{len(levers.against_rule)} against the rule)"
    print(
        f"  must be 0 with levers: harmful {levers.written['harmful'] + levers.harmed_on_hub}"
        f"{rule}, overridden {len(levers.overridden)}, asked again {len(levers.asked_again)}"
    )
    return [problem for arm in arms for problem in arm.unsafe()]


def print_floor(before: int, target: int, after: int) -> None:
    """What the target leaves once the items judged before the first report are counted: no
    lever that waits for a person's word acts before the person reads the report."""
    left = target - before
    print(
        f"  before the first report the person judged {before}, which no lever that waits for "
        f"a person's word can change; the target leaves {left} for the {after} days from the "
        f"first report on, its commands included ({left / max(after, 1):.2f} a day)"
    )


def print_shares(levers: Arm, without: list[Arm]) -> None:
    """Each lever's share: the items judged with every lever but it, less with all of them."""
    print("    each lever's share  (items judged without it / with all; saved = the difference)")
    for arm in without:
        name = arm.off.name if arm.off else arm.name
        unsafe = "; ".join(arm.unsafe()) or "none"
        print(
            f"      {arm.judged - levers.judged:+5}  {name}: {arm.judged} without it, "
            f"{levers.judged} with all (must-be-0 broken without it: {unsafe})"
        )
