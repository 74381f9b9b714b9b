#!/usr/bin/env python3
"""Add a domain's overlay (k8s/overlays/<domain>), its run spread over the clock by its name's hash.

Usage: python k8s/new_domain.py DOMAIN [--every 6h|daily|weekdays|...] [--root DIR]
       python k8s/new_domain.py --schedule DOMAIN EVERY     (print the schedule only)
The overlay is the website overlay with every `website` replaced and the schedule set to the
domain's slot (k8s/schedule_policy.py); the root kustomization gains `- overlays/<domain>`.
Then `make k8s`. Exit 0 when written, 2 on a bad name, period or an existing overlay.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from manifest_policy import DOMAIN_RE
from schedule_policy import EVERY, spread_schedule

HERE = Path(__file__).resolve().parent
TEMPLATE = "website"
SCHEDULE_RE = re.compile(r'^(\s*schedule: )"[^"]*"', re.MULTILINE)
COMMENT_RE = re.compile(r"^\s*# Every 6 hours at the minute.*\n", re.MULTILINE)


def overlay_text(template: str, domain: str, schedule: str) -> str:
    """The template overlay for `domain`, with its run's schedule."""
    text = COMMENT_RE.sub("", template).replace(TEMPLATE, domain)
    comment = f"        # The slot the hash of {domain!r} gives (k8s/schedule_policy.py).\n"
    return SCHEDULE_RE.sub(lambda m: comment + f'{m[1]}"{schedule}"', text, count=1)


def add_domain(root: Path, domain: str, every: str) -> Path:
    """Write overlays/<domain> and list it in the root kustomization; the new overlay's path."""
    if not DOMAIN_RE.match(domain):
        raise ValueError(f"{domain!r} is not a domain name (lower-case letters, digits, -)")
    target = root / "overlays" / domain
    if target.exists():
        raise ValueError(f"{target} exists already; edit its schedule instead")
    schedule = spread_schedule(domain, every)
    template = (root / "overlays" / TEMPLATE / "kustomization.yaml").read_text(encoding="utf-8")
    target.mkdir(parents=True)
    (target / "kustomization.yaml").write_text(
        overlay_text(template, domain, schedule), encoding="utf-8"
    )
    listing = root / "kustomization.yaml"
    lines = listing.read_text(encoding="utf-8").rstrip("\n")
    listing.write_text(f"{lines}\n  - overlays/{domain}\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    """Print a schedule, or write an overlay."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("domain")
    parser.add_argument("every", nargs="?", default="6h", help=EVERY)
    parser.add_argument("--every", dest="every_flag", help="the run's period (default 6h)")
    parser.add_argument("--schedule", action="store_true", help="print the schedule only")
    parser.add_argument("--root", type=Path, default=HERE, help="the k8s/ directory")
    args = parser.parse_args(argv)
    every = args.every_flag or args.every
    try:
        if args.schedule:
            print(spread_schedule(args.domain, every))
            return 0
        target = add_domain(args.root, args.domain, every)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {target / 'kustomization.yaml'}: schedule {spread_schedule(args.domain, every)!r}"
    )
    print("next: canon/domains/<domain>.md, then `make k8s`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
