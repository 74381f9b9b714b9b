"""Model adapters: one required method (`Model.complete`), chosen by a spec string.

The registry imports an adapter only when its spec is asked for, so this package names the base
types, the registry and the child environment's names, never an adapter module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.llm._child_env import EXTRA_VAR, extra_names
    from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt
    from custodian_runtime.llm.registry import build_model, split_spec

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
