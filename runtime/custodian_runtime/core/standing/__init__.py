"""A person's standing: the modes per operation, the grants, and how they rule a run's writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.standing import (
        agreement,
        classes,
        commands,
        earned,
        evidence_grants,
        grants,
        ledger,
        live,
        modes,
        narrowed,
        record,
        renewals,
        rule,
        said_no,
        scoped,
        scopes,
        shadow,
        suggestions,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
