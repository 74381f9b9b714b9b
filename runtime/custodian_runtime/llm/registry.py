"""From a spec string (`file:PATH`, `anthropic`, …) to a model adapter, imported lazily."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import TYPE_CHECKING

from custodian_runtime.errors import ConfigError
from custodian_runtime.llm.base import Model, ModelConfig
from custodian_runtime.llm.specs import ADAPTERS, NEEDS_ARGUMENT, RULES, SPECS

if TYPE_CHECKING:
    import httpx

_EXAMPLES = {"file": "answer.md", "cmd": "./answer.sh"}


def split_spec(spec: str) -> tuple[str, str | None]:
    """`file:notes/a.md` -> ("file", "notes/a.md"); `anthropic` -> ("anthropic", None)."""
    name, sep, argument = spec.partition(":")
    name = name.strip()
    if name not in SPECS:
        valid = ", ".join(sorted(n + (":…" if n in NEEDS_ARGUMENT else "") for n in SPECS))
        raise ConfigError(
            f"unknown model spec {spec!r}; use one of: {valid}", setting="CUSTODIAN_LLM"
        )
    if name in NEEDS_ARGUMENT and not argument:
        raise ConfigError(
            f"model spec {name!r} needs an argument, e.g. {name}:{_EXAMPLES[name]}",
            setting="CUSTODIAN_LLM",
        )
    return name, (argument if sep else None)


def build_model(config: ModelConfig, *, transport: httpx.BaseTransport | None = None) -> Model:
    """Import the adapter named by `config.spec` and construct it (it may raise ConfigError)."""
    name, _ = split_spec(config.spec)
    if name == RULES:
        raise ConfigError(
            f"{RULES!r} asks no model: it is the run's rule planner, not an adapter",
            setting="CUSTODIAN_LLM",
        )
    module_name, _, class_name = ADAPTERS[name].partition(":")
    adapter_class = getattr(importlib.import_module(module_name), class_name)
    limits = {
        "timeout_s": adapter_class.default_timeout_s if config.timeout_s is None else None,
        "max_total_s": adapter_class.default_total_s if config.max_total_s is None else None,
    }
    config = replace(config, **{k: v for k, v in limits.items() if v is not None})
    model: Model = adapter_class(config, transport=transport)
    return model
