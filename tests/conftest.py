"""Shared test set-up: no test may reach past loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, demo_dataset, load_seed

# Fixtures shared by the end-to-end tests (small_hub, ...), the tests of a person's words (cli),
# the tracker tests (roundup, redmine) and the bench's (bench).
pytest_plugins = [
    "support.runs",
    "support.standing",
    "support.roundup",
    "support.redmine",
    "support.bench",
]

# The suite names its deciders (`--by ana`): typed names decide in it, and in the CLIs it runs.
# Off by default (settings/people.py); tests of the default drop this from their environment.
os.environ["CUSTODIAN_TYPED_NAMES"] = "1"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise AssertionError(f"test tried to reach {address!r}: only loopback is allowed")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise AssertionError(f"test tried to reach {address!r}: only loopback is allowed")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any connection that is not to loopback; HTTP to providers must be mocked (respx)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield


# --- reference hub fixtures -------------------------------------------------------------------
# A demo-seeded reference hub on an ephemeral loopback port, one per test (starting one takes a
# few milliseconds). Its clock is `hub_clock`, which tests move by hand instead of sleeping.

HUB_NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


class HubClock:
    """A hand-moved UTC clock for the reference hub."""

    def __init__(self, now: datetime = HUB_NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward by `delta`."""
        self.now += delta


@pytest.fixture
def hub_clock() -> HubClock:
    """The clock the `hub` fixture runs on, starting at `HUB_NOW`."""
    return HubClock()


@pytest.fixture
def hub(tmp_path: Path, hub_clock: HubClock) -> Iterator[ReferenceHub]:
    """A started reference hub seeded with the demo dataset (dated at `HUB_NOW`), no token."""
    db_path = tmp_path / "hub.sqlite3"
    load_seed(db_path, demo_dataset(hub_clock()))
    with ReferenceHub(db_path, clock=hub_clock) as running:
        yield running


@pytest.fixture
def hub_url(hub: ReferenceHub) -> str:
    """The base URL of the `hub` fixture, e.g. `http://127.0.0.1:54321`."""
    return hub.url
