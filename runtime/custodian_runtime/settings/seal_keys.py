"""The seal keys from the environment: CUSTODIAN_SEAL_KEY and, while rotating, the previous key.

A key that is set but empty is a mistake, never "no seals": seals are off only when the variable
is not set at all. Values are never echoed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from custodian_runtime.errors import ConfigError

if TYPE_CHECKING:
    from custodian_runtime.core.journal.seal_key import SealKey

SEAL_KEY = "CUSTODIAN_SEAL_KEY"
SEAL_KEY_PREVIOUS = "CUSTODIAN_SEAL_KEY_PREVIOUS"
SEAL_VARIABLES = (SEAL_KEY, SEAL_KEY_PREVIOUS)


def _raw(name: str, env: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """The variable's value; one set empty in the process environment counts as set."""
    if environ.get(name) == "":
        return ""
    return env.get(name)


def _empty(name: str) -> ConfigError:
    from custodian_runtime.core.journal.seal_key import MIN_KEY_CHARS  # off the startup path

    fix = (
        "unset it to run unsealed (docs/operator.md, Seals: what an unsealed memory cannot "
        "detect), or give "
        f"it at least {MIN_KEY_CHARS} characters (`openssl rand -hex 32`)"
        if name == SEAL_KEY
        else "unset it, or set it to the key being replaced while `custodian journal reseal` runs"
    )
    return ConfigError(f"{name} is set but empty: {fix}", setting=name)


def seal_key_from(env: Mapping[str, str], environ: Mapping[str, str]) -> SealKey | None:
    """The seal key from the layered `env` (and the raw process `environ`), or None when unset."""
    current, previous = (_raw(name, env, environ) for name in SEAL_VARIABLES)
    for name, value in zip(SEAL_VARIABLES, (current, previous), strict=True):
        if value == "":
            raise _empty(name)
    if current is None:
        if previous is not None:
            raise ConfigError(
                f"{SEAL_KEY_PREVIOUS} is set but {SEAL_KEY} is not: set {SEAL_KEY} to the new key "
                "(the previous one only verifies what it sealed)",
                setting=SEAL_KEY,
            )
        return None
    from custodian_runtime.core.journal.seal_key import MIN_KEY_CHARS, SealKey

    try:
        return SealKey(current, previous)
    except ValueError as exc:
        name = SEAL_KEY if len(current) < MIN_KEY_CHARS else SEAL_KEY_PREVIOUS
        raise ConfigError(f"{name}: {exc}", setting=name) from None
