"""The pure core: every decision of a run, as functions of their inputs (no I/O, no clock).

The core is grouped by purpose: each subpackage (plan, context, authority, journal,
approvals) decides one thing; presentation and tooling decide nothing for a run. Import
names from their modules (`from custodian_runtime.core.authority.authorize import
authorize`). Modules with a leading underscore are the parts behind their package and are
not imported from outside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core import (
        approvals,
        authority,
        canon,
        context,
        contract,
        digest,
        fold,
        inert,
        journal,
        limits,
        metrics,
        names,
        observation,
        operations,
        outcomes,
        person,
        plan,
        presentation,
        prices,
        redact,
        ruling,
        run_rules,
        skip,
        standing,
        tooling,
        trackers,
        view,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
