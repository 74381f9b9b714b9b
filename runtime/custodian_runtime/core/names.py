"""The names the hub allows: ids, and the one domain-name rule (what may name a file on disk)."""

from __future__ import annotations

import re

ID_PATTERN = r"^[A-Za-z0-9._:-]{1,64}$"
DOMAIN_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
DOMAIN_RULE = (
    "lowercase letters, digits and '-', starting with a letter or digit, at most 63 characters"
)
_DOMAIN = re.compile(DOMAIN_PATTERN)


def is_domain(value: object) -> bool:
    """True when `value` is a domain name the contract allows (the whole string, no newline)."""
    return isinstance(value, str) and _DOMAIN.fullmatch(value) is not None
