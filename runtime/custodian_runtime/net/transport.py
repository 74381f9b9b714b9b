"""The transport under a hub client: TLS set up only where TLS is spoken, and one pool shared.

httpx builds a TLS context (the CA bundle read, about 24 ms of CPU) for every new client unless
it is handed a transport; a plain `http://` hub never speaks TLS, so its transport has none
loaded. `custodian watch` opens one transport for the process and hands it to every run
(`Shared`): the connections are reused and each run's client is a few objects, not a pool.
"""

from __future__ import annotations

import httpx


def hub_transport(url: str, proxy: str | None) -> httpx.HTTPTransport:
    """A connection pool for `url` (through `proxy` when named): TLS verified only when the hub
    or its proxy is `https`; no environment read (HTTP(S)_PROXY, netrc)."""
    tls = url.lower().startswith("https:") or (proxy or "").lower().startswith("https:")
    # verify=False for a plain http hub: nothing on this pool ever speaks TLS, so no CA bundle
    # is loaded for it; an https hub or proxy is verified against the system's bundle.
    return httpx.HTTPTransport(verify=tls, proxy=proxy, trust_env=False)


class Shared(httpx.BaseTransport):
    """A transport many clients send through, that none of them closes: the owner does."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send through the shared transport."""
        return self.inner.handle_request(request)

    def close(self) -> None:
        """Left open: a run's client ends, the process's pool goes on."""
