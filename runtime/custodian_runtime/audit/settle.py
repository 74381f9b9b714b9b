"""`custodian journal settle REF [--by NAME] --reason TEXT`: close an open write by hand."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from custodian_runtime.clock import new_nonce, utc_now
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.journal.settle import settle


def settle_command(
    memory_dir: Path, ref: str, by: str, reason: str, out: TextIO, seal_key: SealKey | None = None
) -> int:
    """Journal `by`'s closing of the open write `ref` (see `inspect`'s open writes); exit 0."""
    done = settle(memory_dir, ref, by, reason, utc_now, new_nonce(), seal_key)
    out.write(for_terminal(done.text()) + "\n")
    return 0
