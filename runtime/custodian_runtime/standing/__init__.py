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
    from custodian_runtime.standing.shadow_log import shadow_log
    from custodian_runtime.standing.store import StandingStore

__all__ = [
    "ALL",
    "Issue",
    "Issued",
    "Revoked",
    "StandingStore",
    "agreement_rows",
    "expiry",
    "hub_now",
    "issue",
    "issue_grant",
    "list_grants",
    "report",
    "revoke",
    "revoke_grant",
    "set_mode",
    "shadow_log",
    "show",
    "suggested",
    "write_json",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(
                (
                    "ALL",
                    "Issue",
                    "Issued",
                    "Revoked",
                    "agreement_rows",
                    "expiry",
                    "hub_now",
                    "issue",
                    "issue_grant",
                    "list_grants",
                    "report",
                    "revoke",
                    "revoke_grant",
                    "set_mode",
                    "show",
                    "suggested",
                    "write_json",
                ),
                "commands",
            ),
            **dict.fromkeys(("shadow_log",), "shadow_log"),
            **dict.fromkeys(("StandingStore",), "store"),
        },
    )
