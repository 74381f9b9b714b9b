"""How the model is asked: temperature, output tokens, structured output and the prompt's form.

Planning wants the most likely answer: the temperature is 0 unless set (`none` sends none, for a
model that takes only its own). Structured output (the answer in the plan's JSON schema, where
the adapter can ask for it) is on unless turned off.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from custodian_runtime.core.limits import Limits
from custodian_runtime.errors import ConfigError
from custodian_runtime.settings.numbers import env_int

TEMPERATURE = "CUSTODIAN_TEMPERATURE"
TOKENS = "CUSTODIAN_MAX_OUTPUT_TOKENS"
STRUCTURED = "CUSTODIAN_STRUCTURED_OUTPUT"
FORM = "CUSTODIAN_PROMPT_FORM"
BUDGET = "CUSTODIAN_TOKEN_BUDGET"
FORMS = ("full", "compact")
# The compact form's token budget when none is set: room for a 16k context and the answer.
COMPACT_TOKEN_BUDGET = 8000
DEFAULT_TEMPERATURE = 0.0
DEFAULT_TOKENS = 8192
# The compact form's answer limit when none is set: a small model's plan is a few hundred tokens,
# and on a CPU a runaway answer to 8192 takes most of half an hour.
COMPACT_TOKENS = 2048
_ON, _OFF = ("on", "true", "1", "yes"), ("off", "false", "0", "no")


def _given(flags: Mapping[str, Any], flag: str, env: Mapping[str, str], name: str) -> str | None:
    value = flags.get(flag)
    if value not in (None, ""):
        return str(value)
    return env.get(name)


def temperature(flags: Mapping[str, Any], env: Mapping[str, str]) -> float | None:
    """--temperature, else CUSTODIAN_TEMPERATURE, else 0; `none` sends none."""
    raw = _given(flags, "temperature", env, TEMPERATURE)
    if raw is None:
        return DEFAULT_TEMPERATURE
    if raw.strip().lower() == "none":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 2:
        raise ConfigError(
            f"{TEMPERATURE}={raw!r}: give a number from 0 to 2 (0 for planning), or 'none' to "
            "send none and let the server choose",
            setting=TEMPERATURE,
        )
    return value


def max_output_tokens(flags: Mapping[str, Any], env: Mapping[str, str]) -> int:
    """--max-output-tokens, else CUSTODIAN_MAX_OUTPUT_TOKENS, else 8192 (2048 in the compact
    form)."""
    raw = _given(flags, "max_output_tokens", env, TOKENS)
    default = COMPACT_TOKENS if prompt_form(env) == "compact" else DEFAULT_TOKENS
    return env_int({TOKENS: raw} if raw is not None else {}, TOKENS, default)


def structured(flags: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """--structured-output, else CUSTODIAN_STRUCTURED_OUTPUT: on (the default) or off."""
    raw = _given(flags, "structured_output", env, STRUCTURED)
    if raw is None:
        return True
    word = raw.strip().lower()
    if word in _ON or word in _OFF:
        return word in _ON
    raise ConfigError(
        f"{STRUCTURED}={raw!r}: use 'on' (ask for the answer in the plan's JSON schema where the "
        "provider can) or 'off' (Markdown with one ```json block)",
        setting=STRUCTURED,
    )


def prompt_form(env: Mapping[str, str]) -> str:
    """CUSTODIAN_PROMPT_FORM: `full` (the default) or `compact`, for a small context window."""
    form = env.get(FORM, "full").strip().lower() or "full"
    if form not in FORMS:
        raise ConfigError(
            f"{FORM}={form!r}: use 'full', or 'compact' for a model with a small context window "
            "(a shorter system prompt, no overview of other domains, no closed tasks)",
            setting=FORM,
        )
    return form


def prompt_limits(limits: Limits, env: Mapping[str, str]) -> Limits:
    """The limits, with the compact form's smaller token budget unless one is set."""
    if prompt_form(env) != "compact" or env.get(BUDGET):
        return limits
    return replace(limits, token_budget=min(limits.token_budget, COMPACT_TOKEN_BUDGET))
