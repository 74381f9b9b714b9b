"""What a run journals first (`run_started`): what it was configured with, and who ran it."""

from __future__ import annotations

import os
import socket
from typing import Any

from custodian_runtime import __version__
from custodian_runtime.core.digest import digest
from custodian_runtime.packaged import revision
from custodian_runtime.settings import Settings


def started_data(settings: Settings, hub: str) -> dict[str, Any]:
    """The data of `run_started` (`kinds.RunStarted`'s fields) for a run on `hub` (its label)."""
    constitution = settings.canon_dir / "constitution.md"
    return {
        "settings_digest": digest(settings.digest_view()),
        "constitution_digest": digest(constitution.read_text("utf-8"))
        if constitution.is_file()
        else None,
        "model_spec": settings.model.spec,
        "hub_url": hub,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "dry_run": settings.dry_run,
        "version": __version__,
        "revision": revision(),
    }
