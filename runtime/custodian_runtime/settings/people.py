"""Who may decide, as the operator configures it: the review page's proxy header or token file,
the CLI's configured identity, and whether a typed name may decide at all."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.core.approvals.decider import BySource, Network
from custodian_runtime.errors import ConfigError

USER_HEADER = "CUSTODIAN_REVIEW_USER_HEADER"
TRUSTED_PROXIES = "CUSTODIAN_REVIEW_TRUSTED_PROXIES"
TOKENS_FILE = "CUSTODIAN_REVIEW_TOKENS_FILE"
DECIDER = "CUSTODIAN_DECIDER"
TYPED_NAMES = "CUSTODIAN_TYPED_NAMES"
REVIEW_URL = "CUSTODIAN_REVIEW_URL"
NOTIFY_URL = "CUSTODIAN_NOTIFY_URL"
_HEADER = re.compile(r"^[A-Za-z0-9-]{1,64}$")


@dataclass(frozen=True)
class People:
    """How a decider is named: on the page (a proxy's header, a token file, or typed) and on
    the command line (`--by`, CUSTODIAN_DECIDER, or the OS user)."""

    user_header: str | None = None
    trusted_proxies: tuple[Network, ...] = ()
    tokens_file: Path | None = None
    decider: str | None = None
    typed_names: bool = False

    @property
    def page_source(self) -> BySource:
        """Where the review page takes the decider's name from: the proxy, a token, a typed
        name where the operator allows it, else the OS user who runs `custodian review`."""
        if self.user_header is not None:
            return "proxy"
        if self.tokens_file is not None:
            return "token"
        return "typed" if self.typed_names else "os"


def people_from(env: Mapping[str, str], cwd: Path) -> People:
    """The identity settings, each checked; a mistake is a ConfigError that names the fix."""
    header = env.get(USER_HEADER, "").strip() or None
    tokens = env.get(TOKENS_FILE, "").strip() or None
    if header is not None and not _HEADER.match(header):
        raise ConfigError(
            f"{USER_HEADER}={header!r} is not a header name: give one such as X-Forwarded-Email",
            setting=USER_HEADER,
        )
    if header is not None and tokens is not None:
        raise ConfigError(
            f"set {USER_HEADER} or {TOKENS_FILE}, not both: the page names a person one way",
            setting=USER_HEADER,
        )
    trusted = _networks(env.get(TRUSTED_PROXIES, ""))
    if header is not None and not trusted:
        raise ConfigError(
            f"{USER_HEADER} is set but {TRUSTED_PROXIES} is not: name the proxy's addresses "
            "(e.g. 127.0.0.1/32 for a proxy in the same pod), or anyone could send the header",
            setting=TRUSTED_PROXIES,
        )
    return People(
        user_header=header,
        trusted_proxies=trusted,
        tokens_file=None if tokens is None else (cwd / tokens).resolve(),
        decider=env.get(DECIDER, "").strip() or None,
        typed_names=_flag(env.get(TYPED_NAMES, "0")),
    )


def _networks(raw: str) -> tuple[Network, ...]:
    found = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        try:
            found.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ConfigError(
                f"{TRUSTED_PROXIES}: {part!r} is not an address or network (e.g. 10.0.0.0/8)",
                setting=TRUSTED_PROXIES,
            ) from None
    return tuple(found)


def _flag(raw: str) -> bool:
    value = raw.strip().lower()
    if value not in ("1", "0", "true", "false"):
        raise ConfigError(f"{TYPED_NAMES}={raw!r}: use 1 or 0", setting=TYPED_NAMES)
    return value in ("1", "true")


def review_url_from(env: Mapping[str, str]) -> str | None:
    """CUSTODIAN_REVIEW_URL: the review page's address as people open it, or None."""
    url = env.get(REVIEW_URL, "").strip()
    if not url:
        return None
    if not re.fullmatch(r"https?://[^\s/?#@]+(/[^\s?#]*)?", url):
        raise ConfigError(
            f"{REVIEW_URL}={url!r} is not the page's address: give http(s)://host[:port][/path], "
            "e.g. https://review.example.org",
            setting=REVIEW_URL,
        )
    return url.rstrip("/")


def notify_url_from(env: Mapping[str, str]) -> str | None:
    """CUSTODIAN_NOTIFY_URL: the incoming webhook told when items wait, or None."""
    url = env.get(NOTIFY_URL, "").strip()
    if not url:
        return None
    if not re.fullmatch(r"https?://[^\s/?#]+(/\S*)?", url):
        raise ConfigError(
            f"{NOTIFY_URL} is not an http(s) URL: give the incoming webhook's address (Slack "
            "or Teams), e.g. https://hooks.slack.com/services/...",
            setting=NOTIFY_URL,
        )
    return url
