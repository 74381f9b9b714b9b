"""Which backend a hub URL names, and what each backend declares it cannot map (pure).

A plain `http(s)://` URL is a state-hub that speaks the contract itself (the reference hub). A
tracker is named by its backend before the scheme: `roundup+http://host:port/tracker`. The
runtime sees one model, the contract; a tracker backend maps it onto the tracker it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STATE_HUB = "state-hub"  # the contract spoken by the hub itself: no mapping
# The tracker backends, by the name a URL gives them. A backend is registered here and in
# statehub/backends (its adapter); test_tracker_contract.py runs the same tests on each.
TRACKERS: tuple[str, ...] = ("roundup", "redmine")
_SPEC = re.compile(r"^(?:([A-Za-z][A-Za-z0-9-]*)\+)?(https?://\S+)$")


@dataclass(frozen=True)
class HubAddress:
    """A hub URL taken apart: the backend it names and the http(s) URL that backend talks to."""

    backend: str
    url: str


@dataclass(frozen=True)
class StandIn:
    """Something of the contract a backend cannot map, and what it does instead."""

    what: str
    instead: str


def hub_address(url: str) -> HubAddress:
    """The backend and http(s) URL of `url`; ValueError naming the known backends otherwise."""
    found = _SPEC.fullmatch(url.strip())
    if found is None:
        raise ValueError(f"not an http(s) URL, nor <tracker>+http(s):// ({known_schemes()})")
    name, http_url = found.groups()
    if name is None:
        return HubAddress(STATE_HUB, http_url)
    if name.lower() not in TRACKERS:
        raise ValueError(f"no tracker backend {name!r} (known: {known_schemes()})")
    return HubAddress(name.lower(), http_url)


def known_schemes() -> str:
    """The URL forms a hub may be given, for an error message."""
    return ", ".join(["http(s)://", *(f"{name}+http(s)://" for name in TRACKERS)])
