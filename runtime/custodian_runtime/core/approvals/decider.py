"""Who decides, and how the name is known: a proxy's header, a person's token, a configured
identity, the OS user, or a name typed where the operator allows it.

The journal keeps the source with every decision (`by_source` on `approval_decided`), so a
reader can tell an authenticated name from a typed one. Pure: the shell passes in the header,
the peer's address, the configured names and the OS user.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from custodian_runtime.core.inert import is_control

BySource = Literal["proxy", "token", "config", "os", "typed"]
BY_SOURCES: tuple[BySource, ...] = ("proxy", "token", "config", "os", "typed")
MAX_NAME = 100
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Decider:
    """A person's name and where it came from."""

    name: str
    source: BySource


def name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot name a person (`what`: where it came from), or None."""
    if not name or len(name) > MAX_NAME:
        return f"{what} must name the person in 1 to {MAX_NAME} characters"
    if any(is_control(ch) for ch in name):
        return f"{what} holds a control character; give a plain name"
    return None


def cli_decider(
    typed: str | None, configured: str | None, os_user: str | None, *, typed_allowed: bool
) -> Decider | str:
    """The CLI's decider: `--by` where typed names are allowed, else the configured identity
    (CUSTODIAN_DECIDER), else the OS user; or the problem, saying what to set. Where typed
    names are not allowed, `--by` may still say the name the command decides as anyway."""
    if typed is not None and not typed.strip():
        return (
            f"--by: name the person in 1 to {MAX_NAME} characters, or drop --by to decide as "
            "CUSTODIAN_DECIDER or the OS user"
        )
    if typed is not None and typed_allowed:
        return _named(typed.strip(), "typed", "--by")
    if configured is not None and configured.strip():
        found = _named(configured.strip(), "config", "CUSTODIAN_DECIDER")
    elif os_user:
        found = _named(os_user, "os", "the OS user name")
    else:
        found = "no one to decide as: set CUSTODIAN_DECIDER (or CUSTODIAN_TYPED_NAMES=1 and --by)"
    if isinstance(found, str) or typed is None or found.name == typed.strip():
        return found
    said = "CUSTODIAN_DECIDER" if found.source == "config" else "the OS user"
    return (
        f"--by {typed.strip()!r}: typed names do not decide here (CUSTODIAN_TYPED_NAMES is off) "
        f"and this command decides as {found.name!r} ({said}): drop --by, or set "
        "CUSTODIAN_TYPED_NAMES=1 to let a typed name decide (the journal then says by_source "
        "typed)"
    )


def _named(name: str, source: BySource, what: str) -> Decider | str:
    problem = name_problem(name, what)
    return Decider(name, source) if problem is None else problem


def trusted_peer(peer: str, trusted: tuple[Network, ...]) -> bool:
    """True when the request's peer address is one of the proxies trusted to name people."""
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    address = mapped or address
    return any(address.version == net.version and address in net for net in trusted)


def proxy_decider(
    header: str, value: str | None, peer: str, trusted: tuple[Network, ...]
) -> Decider | str:
    """The person a trusted proxy names in `header`, or why the request names no one."""
    if not trusted_peer(peer, trusted):
        return (
            f"this request did not come through the trusted proxy ({peer} is not in "
            "CUSTODIAN_REVIEW_TRUSTED_PROXIES); open the page through it"
        )
    name = (value or "").strip()
    if not name:
        return f"the proxy did not name the person ({header} is missing); sign in through it"
    return _named(name, "proxy", f"the {header} header")
