"""Tooling beside the run: the offline planner and the evals' expectations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.tooling import (
        eval_expect,
        offline_planner,
        planning_facts,
        seed_facts,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
