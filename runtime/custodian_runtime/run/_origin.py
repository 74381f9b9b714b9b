"""The identities of the configured hub and canon (see core/origin.py for what they are)."""

from __future__ import annotations

from pathlib import Path

from custodian_runtime.core.origin import hub_identity_of
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.connect import embedded_db


def hub_identity(settings: Settings) -> str | None:
    """The configured hub's identity; None when no hub is configured."""
    if settings.hub is None:
        return None
    if settings.hub.embedded:
        return f"embedded:{embedded_db(settings.embedded_dir).resolve()}"
    return hub_identity_of(settings.hub.url)


def canon_identity(canon_dir: Path) -> str:
    """The canon directory's resolved absolute path."""
    return str(canon_dir.resolve())


def bound(settings: Settings) -> dict[str, str | None]:
    """What an item or an authorized record carries: {"hub": ..., "canon": ...}."""
    return {"hub": hub_identity(settings), "canon": canon_identity(settings.canon_dir)}
