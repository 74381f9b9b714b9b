"""What `custodian watch` says on its own: its configuration once at start, one line a pass.

Its runs leave out the configuration lines a `custodian run` starts with (the same for every
run of the process), so a skip is one line and a pass over 10,000 quiet domains is one line.
"""

from __future__ import annotations

from collections.abc import Mapping

from custodian_runtime.settings import Settings
from custodian_runtime.statehub.connect import hub_label
from custodian_runtime.watch._select import Shard


def configuration(
    settings: Settings, domains: tuple[str, ...] | None, shard: Shard | None, every_s: float,
    parallel: int,
) -> str:  # fmt: skip
    """Everything the runs share, said once: hub, model, canon, memory, seals and the loop."""
    assert settings.hub is not None
    watched = "every domain on the hub" if domains is None else f"{len(domains)} listed domain(s)"
    cut = f", shard {shard.index}/{shard.count}" if shard else ""
    seals = "sealed" if settings.seal_key is not None else "UNSEALED (CUSTODIAN_SEAL_KEY not set)"
    return (
        f"started: hub {hub_label(settings.hub)} ({settings.hub.source}), model "
        f"{settings.model.spec} ({settings.model_source}), canon {settings.canon_dir} "
        f"({settings.canon_source}), memory {settings.memory_dir}, journals {seals}; "
        f"{watched}{cut}, a pass every {every_s:g} s, at most {parallel} run(s) at once"
    )


def pass_line(number: int, watched: int, started: int, busy: int, ended: Mapping[str, int]) -> str:
    """One pass: how many domains it looked at, ran and left running, and the runs that ended
    since the last pass, by status."""
    return (
        f"pass {number}: {watched} domain(s) looked at, {started} run(s) started, {busy} still "
        f"running; {ended_since(ended)}"
    )


def ended_since(ended: Mapping[str, int]) -> str:
    """The runs that ended since the last pass's line, by status."""
    done = ", ".join(f"{status} {n}" for status, n in sorted(ended.items()))
    return f"since the last pass {sum(ended.values())} ended" + (f" ({done})" if done else "")
