"""What a run decides with besides the hub, named by one digest (core/unchanged.inputs_digest)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custodian_runtime.canon.library import library_digest
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.skip.unchanged import inputs_digest

if TYPE_CHECKING:  # a skip digests its inputs without the run's context (run/_quick.py)
    from custodian_runtime.core.limits import Limits
    from custodian_runtime.run._context import RunContext


def run_inputs(ctx: RunContext) -> str:
    """The digest of the canon files this domain's prompt reads, the limits' numbers, a
    person's modes and grants (`ctx.standing`) and the hub as configured."""
    return inputs_of(ctx.canon_dir, ctx.domain, ctx.limits, ctx.standing, ctx.hub)


def inputs_of(
    canon_dir: Path, domain: str, limits: Limits, standing: Mapping[str, Any] | None, hub: str
) -> str:
    """`run_inputs` from its parts."""
    canon = {
        name: _file_sha256(canon_dir / name) for name in ("constitution.md", f"domains/{domain}.md")
    }
    library = library_digest(canon_dir) if canon_dir.is_dir() else None
    if library is not None:  # any other file of the canon may be shown: a change is a change
        canon["library"] = library
    return inputs_digest(canon, limits.__dict__, standing, hub)


def _file_sha256(path: Path) -> str:
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        return "absent"
