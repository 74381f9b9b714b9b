"""A domain's name on disk: checked before it names a journal, a lock or a snapshot folder."""

from __future__ import annotations

from custodian_runtime.core.names import DOMAIN_RULE, is_domain
from custodian_runtime.errors import ConfigError


def check_domain(domain: str) -> str:
    """A domain names files on disk: only a name the contract allows (core/names.py)."""
    if not is_domain(domain):
        raise ConfigError(
            f"domain {domain!r} cannot name a journal file: use {DOMAIN_RULE}",
            setting="--domain",
        )
    return domain
