"""Secrets out of what people and files read: the credentials in a URL's userinfo.

`http://user:password@hub:8765/` becomes `http://***@hub:8765/`. The hub URL passes through
`redact` wherever it is logged, journaled, written into a note or printed.
"""

from __future__ import annotations

import re

# scheme://userinfo@ : everything up to the last `@` before the path is credentials.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s?#]*@")


def redact(text: str) -> str:
    """`text` with the userinfo (user and password) of every URL in it replaced by `***`."""
    return _USERINFO.sub(r"\1***@", text)
