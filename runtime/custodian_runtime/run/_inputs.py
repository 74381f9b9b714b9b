"""What a run decides with besides the hub, named by one digest (core/unchanged.inputs_digest)."""

from __future__ import annotations

from pathlib import Path

from custodian_runtime.canon.library import library_digest
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.unchanged import inputs_digest
from custodian_runtime.run._context import RunContext


def run_inputs(ctx: RunContext) -> str:
    """The digest of the canon files this domain's prompt reads, the limits' numbers, a
    person's modes and grants (`ctx.standing`) and the hub as configured."""
    canon = {
        name: _file_sha256(ctx.canon_dir / name)
        for name in ("constitution.md", f"domains/{ctx.domain}.md")
    }
    library = library_digest(ctx.canon_dir) if ctx.canon_dir.is_dir() else None
    if library is not None:  # any other file of the canon may be shown: a change is a change
        canon["library"] = library
    return inputs_digest(canon, ctx.limits.__dict__, ctx.standing, ctx.hub)


def _file_sha256(path: Path) -> str:
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        return "absent"
