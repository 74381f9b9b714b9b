"""The state-hub client: the only door to the hub.

`statehub.connect` (open_hub) sits a floor higher, above the settings it reads, so this package
does not import it; callers import it from its module.
"""

from __future__ import annotations

from custodian_runtime.statehub._conditional import NotModified
from custodian_runtime.statehub.client import HubWrite, StateHubClient

__all__ = ["HubWrite", "NotModified", "StateHubClient"]
