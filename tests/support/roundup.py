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
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

import custodian_runtime
from support.servers import free_port, serving

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


@contextmanager
def roundup_tracker(root: Path) -> Iterator[Tracker]:
    """A tracker made under `root` and served by roundup-server until the block ends."""
    port = free_port()
    web = f"http://127.0.0.1:{port}/tracker"
    home = root / "tracker"
    make_tracker(home, web)
    argv = [str(BIN / "roundup-server"), "-n", "127.0.0.1", "-p", str(port), "-t", "thread"]
    argv = _as_unprivileged([*argv, f"tracker={home}"], home)
    with serving("roundup-server", argv, port, root / "roundup-server.log", 20.0):
        yield Tracker(web, home)


@pytest.fixture(scope="session")
def roundup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracker]:
    """One Roundup tracker for the session: each test works in a domain of its own."""
    with roundup_tracker(tmp_path_factory.mktemp("roundup")) as running:
        yield running


class HoldingProxy:
    """A loopback proxy in front of a tracker that keeps back the answer to one write.

    Every request goes on to the tracker (its Origin and Referer rewritten to the tracker's, as
    Roundup checks them); the first whose method and path `hold` picks is made there, and its
    answer is held until `release` is set, then dropped: the sender never learns the write was
    kept.
    """

    def __init__(self, tracker: Tracker, hold: Callable[[str, str], bool]) -> None:
        self.tracker, self._hold = tracker, hold
        self.reached, self.release = threading.Event(), threading.Event()
        self._held = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def web(self) -> str:
        """The tracker's address through this proxy."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/tracker"

    def hub_url(self) -> str:
        """The tracker through this proxy, as a hub URL."""
        return Tracker(self.web, self.tracker.home).hub_url

    def __enter__(self) -> HoldingProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _must_hold(self, method: str, path: str) -> bool:
        if self._held or not self._hold(method, path):
            return False
        self._held = True
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self
        origin = proxy.tracker.web.rsplit("/", 1)[0]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                skip = {
                    "host",
                    "origin",
                    "referer",
                    "content-length",
                    "connection",
                    "accept-encoding",
                }
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                headers.update({"Origin": origin, "Referer": f"{proxy.tracker.web}/"})
                answer = httpx.request(
                    self.command, f"{origin}{self.path}", headers=headers, content=body
                )
                if proxy._must_hold(self.command, self.path):
                    proxy.reached.set()
                    proxy.release.wait(60)
                    self.close_connection = True  # dropped: no answer at all
                    return
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in {
                        "content-length",
                        "transfer-encoding",
                        "connection",
                        "content-encoding",
                    }:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PUT = do_PATCH = _forward

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _rest(tracker: Tracker, user: str, password: str) -> httpx.Client:
    origin = tracker.web.rsplit("/", 1)[0]
    headers = {"X-Requested-With": "rest", "Origin": origin, "Referer": f"{tracker.web}/"}
    return httpx.Client(
        base_url=f"{tracker.web}/rest", auth=(user, password), headers=headers, timeout=10
    )


class Person:
    """A person with a user of their own on the tracker, acting through Roundup's REST API as
    anyone would (the web pages do the same through forms): not through Custodian."""

    def __init__(self, tracker: Tracker, name: str) -> None:
        with _rest(tracker, "admin", "admin-pw") as admin:
            found = admin.get("/data/user", params={"username": name}).json()["data"]
            if not found["collection"]:
                user = {"username": name, "password": f"{name}-pw", "roles": "User"}
                admin.post("/data/user", json=user).raise_for_status()
        self.name, self._http = name, _rest(tracker, name, f"{name}-pw")

    def make_event(self, values: dict[str, str]) -> httpx.Response:
        """POST a progress_event with these properties, as typed; the tracker's answer."""
        return self._http.post("/data/progress_event", json=values)

    def write(self, task_id: str, event_type: str, summary: str, **typed: str) -> str:
        """A progress event on a task (the contract's id, `t3`); the contract's id of it."""
        body = {"task": task_id.removeprefix("t"), "event_type": event_type, "summary": summary}
        made = self.make_event({**body, **typed})
        made.raise_for_status()
        return f"e{made.json()['data']['id']}"

    def set_status(self, task_id: str, status: str) -> httpx.Response:
        """A task's status changed in the tracker, with the ETag Roundup requires."""
        return self.edit_task(task_id, {"status": status})

    def edit_task(self, task_id: str, values: dict[str, str]) -> httpx.Response:
        """A task's properties changed in the tracker."""
        return self._change(f"/data/task/{task_id.removeprefix('t')}", values)

    def resolve_flag(self, flag_id: str) -> httpx.Response:
        """A flag resolved in the tracker (its status only, as a person sets it)."""
        return self._change(f"/data/flag/{flag_id.removeprefix('f')}", {"status": "resolved"})

    def edit_event(self, event_id: str, values: dict[str, str]) -> httpx.Response:
        """A progress event's properties changed in the tracker."""
        return self._change(f"/data/progress_event/{event_id.removeprefix('e')}", values)

    def _change(self, path: str, values: dict[str, str]) -> httpx.Response:
        etag = self._http.get(path).json()["data"]["@etag"]
        return self._http.put(path, json=values, headers={"If-Match": etag})

    def close(self) -> None:
        """Close this person's connection."""
        self._http.close()
