"""The state-hub client: the only door to the hub.

`statehub.connect` (open_hub) sits a floor higher, above the settings it reads, so this package
does not import it; callers import it from its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.statehub._conditional import NotModified
    from custodian_runtime.statehub._failures import HubPreconditionFailed
    from custodian_runtime.statehub.client import HubWrite, StateHubClient

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
