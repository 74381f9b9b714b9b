"""What a run decides with besides the hub, named by one digest (core/unchanged.inputs_digest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.unchanged import inputs_digest
from custodian_runtime.run._context import RunContext


def run_inputs(ctx: RunContext) -> str:
    """The digest of the canon files this domain's prompt reads, the policy's numbers, the
    grants and the hub as configured."""
    canon = {
        name: _file_sha256(ctx.canon_dir / name)
        for name in ("constitution.md", f"domains/{ctx.domain}.md")
    }
    return inputs_digest(canon, ctx.policy.__dict__, grants(), ctx.hub)


def grants() -> Any:
    """The standing grants a run decides with: none yet. When grants exist, return what they
    are here, so that a change to them makes the next run read the domain."""
    return None


def _file_sha256(path: Path) -> str:
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        return "absent"
