"""Reading the journal back: `inspect` (verify, show), `replay` (re-decide), `journal settle`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.audit.inspection import EXIT_NOT_FOUND, inspect_command
    from custodian_runtime.audit.replay import replay_command
    from custodian_runtime.audit.settle import settle_command

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
