"""Spread the per-domain CronJobs over the clock by a hash of the domain's name; refuse clashes.

A domain's minute is the first eight bytes of the SHA-256 of its UTF-8 name, read as a
big-endian integer, modulo 60; its hour is that integer divided by 60, modulo 24 (the same hash
`custodian watch --shard` cuts shards with). So a thousand domains every six hours start about
four a minute instead of a thousand at once, and a domain's slot never moves when others come.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterator

from manifest_policy import Doc, dig, domain_of, ident, is_prune

EVERY_RE = re.compile(r"^([1-9][0-9]?)h$")
EVERY = "1h, 2h, 3h, 4h, 6h, 8h, 12h (hours that divide a day), daily or weekdays"


def slot(domain: str) -> tuple[int, int]:
    """(minute, hour) of `domain`, from the SHA-256 of its name: `custodian watch --shard`'s
    hash (watch/_select.shard_of), kept here so the script runs without the runtime installed
    (tests/k8s/test_k8s_fleet.py holds the two to one rule)."""
    number = int.from_bytes(hashlib.sha256(domain.encode("utf-8")).digest()[:8], "big")
    return number % 60, (number // 60) % 24


def spread_schedule(domain: str, every: str) -> str:
    """The cron schedule of `domain` for a period: `6h` -> "37 3/6 * * *" (its own minute)."""
    minute, hour = slot(domain)
    if every == "daily":
        return f"{minute} {hour} * * *"
    if every == "weekdays":
        return f"{minute} {hour} * * 1-5"
    hours = EVERY_RE.match(every)
    if hours is None or 24 % int(hours[1]) != 0:
        raise ValueError(f"every {every!r}: give one of {EVERY}")
    step = int(hours[1])
    return f"{minute} * * * *" if step == 1 else f"{minute} {hour % step}/{step} * * *"


def cronjob_domains(docs: list[Doc], overlay_domain: str | None) -> list[tuple[str, Doc]]:
    """(domain, run CronJob) of one rendered overlay."""
    return [
        (domain_of(d, overlay_domain), d)
        for d in docs
        if d.get("kind") == "CronJob" and not is_prune(d)
    ]


def check_schedules(runs: list[tuple[str, Doc]]) -> Iterator[str]:
    """Two domains whose run CronJobs fire at the same moments: named, with a spread to use."""
    same: dict[tuple[str, str], list[tuple[str, Doc]]] = defaultdict(list)
    for domain, cj in runs:
        same[(str(dig(cj, "spec.schedule")), str(dig(cj, "spec.timeZone")))].append((domain, cj))
    for (schedule, zone), found in sorted(same.items()):
        domains = sorted({domain for domain, _ in found})
        if len(domains) < 2:
            continue
        names = ", ".join(sorted(ident(cj) for _, cj in found))
        hints = "; ".join(f"{d}: {spread_schedule(d, 'daily')!r} daily" for d in domains[:4])
        yield (
            f"domains {', '.join(domains)} share the schedule {schedule!r} ({zone}) in {names}: "
            f"every model call at once. Spread them by the hash of the name "
            f"(`python k8s/new_domain.py --schedule D EVERY`), e.g. {hints}"
        )
