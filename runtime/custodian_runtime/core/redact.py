"""Secrets out of what people and files read: the credentials in a URL's userinfo.

`http://user:password@hub:8765/` becomes `http://***@hub:8765/`. The hub URL passes through
`redact` wherever it is logged, journaled, written into a note or printed. `redact_values` also
hides known secret values (a provider key, the hub token) in outside text, e.g. a model's stderr.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# scheme://userinfo@ : everything up to the last `@` before the path is credentials.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s?#]*@")


def redact(text: str) -> str:
    """`text` with the userinfo (user and password) of every URL in it replaced by `***`."""
    return _USERINFO.sub(r"\1***@", text)


MIN_SECRET = 8  # shorter values are too likely to be ordinary words


def redact_values(text: str, secrets: Iterable[str]) -> str:
    """`redact(text)` with every known secret value (of MIN_SECRET or more characters) as `***`."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= MIN_SECRET:
            text = text.replace(secret, "***")
    return redact(text)
