"""Numbers read from the environment: each a whole or decimal number in range, or a ConfigError.

The run's caps, budgets and windows are `core.limits.Limits`'s fields, read from their
`CUSTODIAN_*` variables with the limits' defaults; timeouts and attempts come through `env_int` and
`env_float` too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields

from custodian_runtime.core.limits import Limits
from custodian_runtime.errors import ConfigError
from custodian_runtime.settings.table import number


def env_int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    """A whole-number variable, or the default (settings/table.py's when not given)."""
    raw = env.get(name)
    if raw is None:
        return int(number(name)) if default is None else default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number", setting=name) from None
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, not {value}", setting=name)
    return value


def env_float(env: Mapping[str, str], name: str, default: float | None = None) -> float:
    """A positive number variable, or the default (settings/table.py's when not given)."""
    raw = env.get(name)
    if raw is None:
        return float(number(name)) if default is None else default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number", setting=name) from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a positive, finite number, not {raw}", setting=name)
    return value


_AT_MOST = {"budget_window_hours": 720, "defer_days": 30}
# A share of the token budget in percent: the observed state keeps the rest.
_PERCENT_AT_MOST = {"canon_share_percent": 90}


def limits_from(env: Mapping[str, str]) -> Limits:
    """Caps and budgets (core/limits.py), each overridable by CUSTODIAN_<FIELD NAME>."""
    default = Limits()
    values = {}
    for f in fields(Limits):
        name = f"CUSTODIAN_{f.name.upper()}"
        value = getattr(default, f.name)
        most = _AT_MOST.get(f.name)
        values[f.name] = (
            env_int(env, name, value) if most is None else _at_most(env, name, value, most)
        )
        if f.name in _PERCENT_AT_MOST and values[f.name] > _PERCENT_AT_MOST[f.name]:
            raise ConfigError(
                f"{name} must be at most {_PERCENT_AT_MOST[f.name]} (percent of "
                "CUSTODIAN_TOKEN_BUDGET): the observed state needs the rest",
                setting=name,
            )
    return Limits(**values)


def _at_most(env: Mapping[str, str], name: str, default: int, most: int) -> int:
    """A window the journal's checkpoint can answer: it keeps 31 days of Custodian's writes."""
    value = env_int(env, name, default)
    if value > most:
        raise ConfigError(
            f"{name} must be at most {most}: the journal's checkpoint keeps Custodian's own "
            "writes for 31 days",
            setting=name,
        )
    return value
