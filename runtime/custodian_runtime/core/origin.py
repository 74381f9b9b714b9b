"""Where an item came from: the hub it was observed on and the canon it was proposed for.

An approval item and an `authorized` journal record carry both; approve and reconcile act only
on the same hub and canon. The hub is named by its URL without userinfo (scheme and host in
lower case, no trailing slash), or `embedded:<database path>` for the embedded hub, whose URL
changes every run. The canon is named by its directory's resolved absolute path.
"""

from __future__ import annotations

import re

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^/?#]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?")


def hub_identity_of(url: str) -> str:
    """The hub's URL without userinfo, scheme and host lower-cased, no trailing slash."""
    text = url.strip()
    match = _URL.match(text)
    if match is None:
        return text.rstrip("/")
    scheme, host, path, query = match.groups()
    return f"{scheme.lower()}://{host.lower()}{path.rstrip('/')}{query or ''}"


def origin_problem(what: str, recorded: str | None, here: str, fix: str) -> str | None:
    """Why an item bound to `recorded` may not act on `here` (None when they are the same)."""
    if recorded is None:
        return (
            f"it records no {what} it was proposed on (it was queued before items were bound "
            "to their origin); reject it, and a later run may propose it again"
        )
    if recorded != here:
        label = "hub" if what == "hub" else "the canon"
        return (
            f"it was proposed {'on' if what == 'hub' else 'for'} {label} {recorded}, but this "
            f"would act on {label} {here}; nothing was done. {fix} {recorded}"
        )
    return None
