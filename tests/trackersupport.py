"""A real Roundup tracker on 127.0.0.1 for the tracker backends' tests, one per session.

`roundup-admin` makes the tracker (the minimal template, with Custodian's schema and detector
from `_data/roundup/`), `roundup-server` serves it. Roundup refuses to run as root, so as root
the server runs as `nobody`, keeping only the capability to read and search (the venv and the
clone may lie in folders only root may enter, as a mktemp clone does); the tracker's own folder
is handed to `nobody`, who writes its database.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import custodian_runtime

SCHEMA = Path(custodian_runtime.__file__).parent / "_data" / "roundup"
BIN = Path(sys.executable).parent
NOBODY = 65534
PASSWORD = "custodian-pw"
# Roundup hashes a password on every request that logs in; the default rounds cost ~0.4 s each.
ROUNDS = "1000"


@dataclass(frozen=True)
class Tracker:
    """A running tracker: its web URL, the URL Custodian is given, and its home."""

    web: str  # http://127.0.0.1:PORT/tracker
    home: Path

    @property
    def hub_url(self) -> str:
        """The tracker as a hub URL: the backend, the user and the tracker's address."""
        scheme, rest = self.web.split("://", 1)
        return f"roundup+{scheme}://custodian:{PASSWORD}@{rest}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _admin(home: Path, *args: str) -> None:
    subprocess.run(
        [str(BIN / "roundup-admin"), "-i", str(home), *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )


def make_tracker(home: Path, web: str) -> None:
    """A new tracker at `home` with Custodian's schema, an admin and a `custodian` user."""
    options = f"tracker_web={web}/,tracker_name=custodian,mail_domain=localhost"
    _admin(
        home, "install", "minimal", "sqlite", f"{options},password_pbkdf2_default_rounds={ROUNDS}"
    )
    shutil.copy(SCHEMA / "schema.py.in", home / "schema.py")
    shutil.copy(SCHEMA / "custodian-detector.py.in", home / "detectors" / "custodian.py")
    _admin(home, "initialise", "admin-pw")
    _admin(home, "create", "user", "username=custodian", f"password={PASSWORD}", "roles=User")


def _as_unprivileged(argv: list[str], home: Path) -> list[str]:
    if os.geteuid() != 0:
        return argv
    for path in [home, *home.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) drops root for roundup-server"
    keep = f"+{_reading_capability()}"
    ids = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return [setpriv, *ids, f"--inh-caps={keep}", f"--ambient-caps={keep}", *argv]


def _reading_capability() -> str:
    """The capability that lets `nobody` read the venv wherever it lies: read-and-search where
    the bounding set has it; else (a container's default set) DAC override, in a test only."""
    status = Path("/proc/self/status").read_text(encoding="ascii")
    bounding = int(
        next(line.split()[1] for line in status.splitlines() if line.startswith("CapBnd")), 16
    )
    return "dac_read_search" if bounding & (1 << 2) else "dac_override"


def _wait_for(
    port: int, server: subprocess.Popen[bytes], log: Path, deadline_s: float = 20.0
) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if server.poll() is not None:
            raise RuntimeError(f"roundup-server ended: {log.read_text(errors='replace')[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"roundup-server did not listen on port {port} within {deadline_s} s")


@contextmanager
def roundup_tracker(root: Path) -> Iterator[Tracker]:
    """A tracker made under `root` and served by roundup-server until the block ends."""
    port = _free_port()
    web = f"http://127.0.0.1:{port}/tracker"
    home = root / "tracker"
    make_tracker(home, web)
    argv = [str(BIN / "roundup-server"), "-n", "127.0.0.1", "-p", str(port), "-t", "thread"]
    log = root / "roundup-server.log"  # a file, not a pipe nobody reads: a full pipe stalls it
    with log.open("wb") as out:
        server = subprocess.Popen(
            _as_unprivileged([*argv, f"tracker={home}"], home), stdout=out, stderr=subprocess.STDOUT
        )
    try:
        _wait_for(port, server, log)
        yield Tracker(web, home)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def roundup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracker]:
    """One Roundup tracker for the session: each test works in a domain of its own."""
    with roundup_tracker(tmp_path_factory.mktemp("roundup")) as running:
        yield running
