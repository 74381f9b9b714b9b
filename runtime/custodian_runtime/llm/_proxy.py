"""The model clients' proxy rule: the standard HTTP(S)_PROXY, ALL_PROXY and NO_PROXY variables.

Read from the settings' environment snapshot (adapters never read the process environment), as
curl and httpx's own `trust_env` read them: the lowercase name first, `NO_PROXY=*` turns proxies
off, and each NO_PROXY entry is a host, a domain suffix, an IP address or a URL pattern.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

import httpx

_SCHEMES = (("http://", "HTTP_PROXY"), ("https://", "HTTPS_PROXY"), ("all://", "ALL_PROXY"))


def proxy_mounts(env: Mapping[str, str]) -> dict[str, httpx.BaseTransport | None]:
    """httpx mounts for the proxies `env` names: a proxy transport per scheme, None to bypass."""
    if (_variable(env, "NO_PROXY") or "").strip() == "*":
        return {}
    mounts: dict[str, httpx.BaseTransport | None] = {}
    for scheme, name in _SCHEMES:
        url = _variable(env, name)
        if url:
            mounts[scheme] = httpx.HTTPTransport(proxy=url if "://" in url else f"http://{url}")
    if not mounts:
        return {}
    for entry in (_variable(env, "NO_PROXY") or "").split(","):
        pattern = _bypass_pattern(entry.strip())
        if pattern:
            mounts[pattern] = None
    return mounts


def _variable(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name.lower()) or env.get(name) or None


def _bypass_pattern(host: str) -> str | None:
    """The httpx mount pattern that sends `host` (a NO_PROXY entry) direct."""
    if not host:
        return None
    if "://" in host:
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if host.lower() == "localhost":
            return f"all://{host}"
        return f"all://*{host.lstrip('.')}"
    return f"all://[{host}]" if address.version == 6 else f"all://{host}"
