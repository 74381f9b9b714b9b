"""The one way to reach the state-hub: a ready client of a URL, or of the embedded hub in-process.

`embedded` is the reference hub in this process, behind an httpx transport: no socket, no port,
no server thread. Its database is `<embedded dir>/hub.sqlite3`. This module does not know the
reference hub: the program wires it into the settings where it is composed (`cli/hub.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

import httpx

from custodian_runtime.core.redact import redact
from custodian_runtime.core.trackers.address import STATE_HUB, hub_address
from custodian_runtime.errors import ConfigError
from custodian_runtime.net.transport import Shared, hub_transport
from custodian_runtime.process.stopping import OnRetry, StopFlag
from custodian_runtime.settings import EmbeddedHub, HubSettings
from custodian_runtime.statehub.backends import backend
from custodian_runtime.statehub.client import StateHubClient

# The base URL the client is given for the in-process hub. `.invalid` never resolves (RFC 2606),
# so nothing could reach a real host under this name.
EMBEDDED_BASE_URL = "http://embedded.invalid"
EMBEDDED_DB = "hub.sqlite3"


def embedded_db(embedded_dir: Path) -> Path:
    """Where the embedded hub keeps its data."""
    return embedded_dir / EMBEDDED_DB


def hub_label(hub: HubSettings) -> str:
    """The hub as journaled, noted and printed: `embedded`, or the URL without credentials."""
    return "embedded" if hub.embedded else redact(hub.url)


@contextmanager
def open_hub(
    hub: HubSettings,
    embedded_dir: Path,
    clock: Callable[[], datetime],
    *,
    transport: httpx.BaseTransport | None = None,
    stop: StopFlag | None = None,
    on_retry: OnRetry | None = None,
) -> Iterator[StateHubClient]:
    """A client of `hub`, closed after the block; for `embedded`, the hub in this process too.

    `transport` replaces the network (or the embedded hub) under the client; `stop` cuts reads
    and retry waits short on a signal; `clock` dates the demo data of a new embedded hub.
    """
    with ExitStack() as stack:
        if hub.embedded:
            url = EMBEDDED_BASE_URL
            if transport is None:
                transport = stack.enter_context(_embedded(hub)(embedded_db(embedded_dir), clock))
        else:
            url, transport = _through_backend(hub, transport)
        client = StateHubClient(
            url,
            token=hub.token,
            timeout_s=hub.timeout_s,
            max_attempts=hub.max_attempts,
            max_total_s=hub.max_total_s,
            max_response_bytes=hub.max_bytes,
            transport=transport,
            sleep=time.sleep if stop is None else stop.sleep,  # a signal cuts a retry wait short
            stop=stop,
            on_retry=on_retry,
            proxy=None if hub.embedded else hub.proxy,
        )
        yield stack.enter_context(client)


def _through_backend(
    hub: HubSettings, transport: httpx.BaseTransport | None
) -> tuple[str, httpx.BaseTransport | None]:
    """The http(s) URL the client talks to, and the transport of the backend the URL names (a
    tracker's maps the contract onto it; the state-hub's is the network, as it always was)."""
    address = hub_address(hub.url)
    if address.backend == STATE_HUB:
        return hub.url, transport
    inner = transport if transport is not None else hub_transport(address.url, hub.proxy)
    return address.url, backend(address.backend).transport(address.url, inner)


@contextmanager
def shared_transport(hub: HubSettings) -> Iterator[httpx.BaseTransport | None]:
    """One connection pool for every client of this process, closed after the block; None for
    the embedded hub, which each client opens in-process for itself."""
    if hub.embedded:
        yield None
        return
    with hub_transport(hub_address(hub.url).url, hub.proxy) as pool:
        yield Shared(pool)


def _embedded(hub: HubSettings) -> EmbeddedHub:
    """The opener of the in-process hub the program wired in, or a ConfigError that says how."""
    if hub.open_embedded is None:
        raise ConfigError(
            "the embedded hub is not wired into this program: compose the settings with "
            "custodian_runtime.cli.hub.with_embedded_hub (as the CLI does), or pass --hub URL",
            setting="--hub",
        )
    return hub.open_embedded
