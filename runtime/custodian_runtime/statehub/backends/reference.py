"""The reference hub's backend: it speaks the contract, so requests go out as they are."""

from __future__ import annotations

import httpx

from custodian_runtime.core.trackers.address import STATE_HUB
from custodian_runtime.statehub.backends import Backend


class StateHubBackend(Backend):
    """A state-hub (the reference hub, or any hub of the contract): nothing to map."""

    name = STATE_HUB

    def transport(self, url: str, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        """The network itself."""
        return inner


BACKEND = StateHubBackend()
