"""The httpx client every request to the hub goes through: its headers, its auth, its pool.

Light on purpose (no pydantic): a skip sends its conditional read with it (run/_quick.py).
"""

from __future__ import annotations

import httpx

from custodian_runtime import __version__
from custodian_runtime.net.transport import hub_transport
from custodian_runtime.statehub._checks import checked_base_url, checked_token


def http_client(
    base_url: str,
    token: str | None,
    timeout_s: float,
    transport: httpx.BaseTransport | None,
    proxy: str | None,
) -> tuple[str, httpx.Client]:
    """The hub's base URL without credentials, and the httpx client that talks to it."""
    # Credentials in the URL become Basic auth, so no request URL (and no error naming one)
    # carries them.
    url, basic = checked_base_url(base_url)
    headers = {"User-Agent": f"custodian/{__version__}", "Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {checked_token(token)}"
    client = httpx.Client(
        base_url=url,
        headers=headers,
        timeout=httpx.Timeout(timeout_s),
        # The token goes through no proxy but the one named for the hub (STATE_HUB_PROXY):
        # HTTP(S)_PROXY, ALL_PROXY and netrc are the model clients' and other tools' business.
        # TLS is set up only for an https hub or proxy (net/transport.py).
        transport=transport if transport is not None else hub_transport(url, proxy),
        auth=basic,
        follow_redirects=False,  # a redirect would resend the token and body somewhere else
        trust_env=False,
    )
    return url, client
