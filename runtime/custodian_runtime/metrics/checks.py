"""When the watch last looked at each domain, kept for `custodian status` (and the watch's own
`/metrics`): a pass that found nothing to do is a check, and a run is one too.

One file per watch (per shard), `memory/watch/checks[-I-of-N].json`, written by the watch at most
once a minute and at its end, as what it saw (watch/_seen.py). A view, never a truth: `status`
reads the newest time each domain has in any of them; a file it cannot read names no check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from custodian_runtime.files.atomic import atomic_write_text

FORMAT = 1


def checks_path(memory_dir: Path, shard: tuple[int, int] | None) -> Path:
    """Where one watch keeps its checks: one file per shard, as what it saw."""
    name = "checks.json" if shard is None else f"checks-{shard[0]}-of-{shard[1]}.json"
    return memory_dir / "watch" / name


def save_checks(path: Path, checked: Mapping[str, float]) -> None:
    """Keep each domain's last check (Unix time), atomically."""
    atomic_write_text(path, json.dumps({"format": FORMAT, "checked": dict(checked)}))


def last_checks(memory_dir: Path) -> dict[str, datetime]:
    """Each domain's newest check in any watch's file (none: no watch ran here)."""
    found: dict[str, float] = {}
    for path in sorted((memory_dir / "watch").glob("checks*.json")):
        for domain, at in _read(path).items():
            found[domain] = max(at, found.get(domain, at))
    return {domain: datetime.fromtimestamp(at, UTC) for domain, at in found.items()}


def _read(path: Path) -> dict[str, float]:
    try:
        kept = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict) or kept.get("format") != FORMAT:
        return {}
    checked = kept.get("checked")
    if not isinstance(checked, dict):
        return {}
    return {
        str(d): float(at)
        for d, at in checked.items()
        if isinstance(at, (int, float)) and not isinstance(at, bool) and at > 0
    }
