"""Where an item came from: the hub it was observed on and the canon it was proposed for.

An approval item and an `authorized` journal record carry both; approve and reconcile act only
on the same hub and canon. A hub that serves a `hub_id` (contract v1.2) is named by it,
`hub_id:<id>`, so the same hub behind another URL, port or proxy is the same hub. A v1.1 hub has
none: it is named by where it is reached, its URL without userinfo (scheme and host in lower
case, no trailing slash), or `embedded:<database path>` for the embedded hub. Items bound that
way before (or on a v1.1 hub) keep working against that URL. The canon is named by its
directory's resolved absolute path.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^/?#]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?")
HUB_ID_PREFIX = "hub_id:"
EMBEDDED_PREFIX = "embedded:"


def hub_identity_of(url: str) -> str:
    """The hub's URL without userinfo, scheme and host lower-cased, no trailing slash."""
    text = url.strip()
    match = _URL.match(text)
    if match is None:
        return text.rstrip("/")
    scheme, host, path, query = match.groups()
    return f"{scheme.lower()}://{host.lower()}{path.rstrip('/')}{query or ''}"


@dataclass(frozen=True)
class HubOrigin:
    """The configured hub as items are bound to it: its hub_id, and where it is reached."""

    hub_id: str | None  # None: a v1.1 hub (or an embedded database not made yet)
    location: str  # the URL without userinfo, or `embedded:<database path>`

    @property
    def identity(self) -> str:
        """What an item or an authorization records: `hub_id:<id>`, else the location."""
        return self.location if self.hub_id is None else f"{HUB_ID_PREFIX}{self.hub_id}"

    def notice(self) -> str | None:
        """What a person is told once when the hub has no hub_id (None when it has one)."""
        if self.hub_id is not None:
            return None
        return (
            f"the hub at {self.location} sends no hub_id (contract v1.1): items are bound to "
            "this URL, so the same hub reached by another URL counts as another hub"
        )


def same_hub(recorded: str, here: HubOrigin) -> bool:
    """True when an item bound to `recorded` may act on `here`: the same hub_id, or, for an
    item bound by URL, the same URL."""
    return recorded in (here.identity, here.location)


def hub_problem(recorded: str | None, here: HubOrigin, fix: str) -> str | None:
    """Why an item bound to hub `recorded` may not act on `here` (None when it may)."""
    if recorded is None:
        return origin_problem("hub", None, here.identity, fix)
    if same_hub(recorded, here):
        return None
    shown = here.identity if here.hub_id is None else f"{here.identity} (at {here.location})"
    return (
        f"it was proposed on hub {recorded}, but this would act on hub {shown}; nothing was "
        f"done. {fix}"
    )


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
            f"would act on {label} {here}; nothing was done. {fix}"
        )
    return None


@dataclass(frozen=True)
class DecisionSite:
    """Where a decision is made: the hub (None: none configured), the canon, the memory."""

    hub: HubOrigin | None
    canon: str
    memory: str


def approve_command(
    approval_id: str,
    note: str | None,
    memory: str,
    *,
    hub_at: str | None = None,
    canon: str | None = None,
) -> str:
    """The `custodian approvals approve` command line, quoted for a POSIX shell, that decides
    the item on the hub reached at `hub_at` (a URL, or `embedded:<database path>`) or with
    the canon `canon`."""
    # No --by: whoever runs it decides, as CUSTODIAN_DECIDER or the OS user (a typed name is
    # refused under the default settings, core/approvals/decider.py).
    argv = ["custodian", "approvals", "--memory", memory, "approve", approval_id]
    argv += [] if note is None else ["--note", note]
    env: list[str] = []
    if hub_at is not None and hub_at.startswith(EMBEDDED_PREFIX):
        directory = hub_at.removeprefix(EMBEDDED_PREFIX).rpartition("/")[0] or "/"
        env = [f"CUSTODIAN_EMBEDDED_DIR={shlex.quote(directory)}"]
        argv += ["--hub", "embedded"]
    elif hub_at is not None:
        argv += ["--hub", hub_at]
    argv += [] if canon is None else ["--canon", canon]
    return " ".join([*env, *(shlex.quote(part) for part in argv)])
