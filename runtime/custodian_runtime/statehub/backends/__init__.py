"""The tracker port: a backend serves the state-hub contract from what it talks to.

The runtime sees one model, the contract, through `StateHubClient`. A backend is what sits under
that client: the reference hub's backend sends the contract's requests as they are; a tracker's
backend answers them from the tracker (Roundup, Redmine). Backends register here by the name a hub
URL gives them (`roundup+http://...`, core/trackers) and are imported when first named.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod

import httpx

from custodian_runtime.core.trackers.address import STATE_HUB, StandIn

# Each backend's module under this package, by the name a hub URL gives it.
REGISTRY: dict[str, str] = {
    STATE_HUB: "reference",
    "roundup": "roundup",
    "redmine": "redmine",
}


class Backend(ABC):
    """One kind of hub: how the contract's requests reach it, and what it cannot map."""

    name: str = ""
    stand_ins: tuple[StandIn, ...] = ()  # what the contract has and this backend stands in for

    @abstractmethod
    def transport(self, url: str, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        """The transport the contract's client sends through, over `inner` (the network)."""
        raise NotImplementedError(f"{type(self).__name__} must implement Backend.transport")


def backend(name: str) -> Backend:
    """The registered backend `name`; a ValueError listing the known ones otherwise."""
    module = REGISTRY.get(name)
    if module is None:
        raise ValueError(f"no hub backend {name!r} (known: {', '.join(REGISTRY)})")
    found: Backend = importlib.import_module(f"{__name__}.{module}").BACKEND
    return found
