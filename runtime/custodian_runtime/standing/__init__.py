"""A person's standing on disk and its commands: modes, grants and the agreement report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.standing.commands import (
        ALL,
        Issue,
        Issued,
        Revoked,
        agreement_rows,
        expiry,
        hub_now,
        issue,
        issue_grant,
        list_grants,
        report,
        revoke,
        revoke_grant,
        set_mode,
        show,
        suggested,
        write_json,
    )
    from custodian_runtime.standing.store import StandingStore

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
