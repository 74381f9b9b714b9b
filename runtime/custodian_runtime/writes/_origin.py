"""The identities of the configured hub and canon (what they are: core/authority/origin.py)."""

from __future__ import annotations

from pathlib import Path

from custodian_runtime.core.authority.origin import EMBEDDED_PREFIX, HubOrigin, hub_identity_of
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.statehub.connect import embedded_db


def hub_location(settings: Settings) -> str | None:
    """Where the configured hub is reached: its URL without userinfo, or
    `embedded:<database path>`; None when no hub is configured."""
    if settings.hub is None:
        return None
    if settings.hub.embedded:
        return f"{EMBEDDED_PREFIX}{embedded_db(settings.embedded_dir).resolve()}"
    return hub_identity_of(settings.hub.url)


def hub_origin(settings: Settings, client: StateHubClient) -> HubOrigin | None:
    """The configured hub's identity: its hub_id from GET /health (v1.2), and its location."""
    location = hub_location(settings)
    return None if location is None else client.hub_origin(location)


def canon_identity(canon_dir: Path) -> str:
    """The canon directory's resolved absolute path."""
    return str(canon_dir.resolve())


def bound(settings: Settings, hub: HubOrigin | None) -> dict[str, str | None]:
    """What an item or an authorized record carries: {"hub", "hub_at", "canon"}: the hub's
    identity (its hub_id, or for a v1.1 hub its URL), where it was reached, and the canon."""
    return {
        "hub": None if hub is None else hub.identity,
        "hub_at": None if hub is None else hub.location,
        "canon": canon_identity(settings.canon_dir),
    }
