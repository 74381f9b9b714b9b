"""A loopback HTTP server that misbehaves on purpose: it drips, floods, or fails before answering.

    with SlowServer({"/state/summary": Drip(interval_s=0.5)}) as server:
        ...  # server.url; server.sent["/state/summary"] counts the body bytes it got out

Paths not in the table are 404. Every behaviour stops when the client hangs up or the server stops.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Drip:
    """Send the headers, then one byte of an endless JSON string every `interval_s`."""

    interval_s: float = 1.0


@dataclass(frozen=True)
class Flood:
    """Send `total` bytes of body in 64 KiB chunks, with no Content-Length (read to the end)."""

    total: int


@dataclass(frozen=True)
class Fixed:
    """Answer `status` with `body`, after failing the first `fail_first` requests with 503."""

    body: bytes
    status: int = 200
    fail_first: int = 0


Behaviour = Drip | Flood | Fixed


class SlowServer:
    """A threaded stdlib server playing one behaviour per path, for GET and POST alike."""

    def __init__(self, routes: dict[str, Behaviour]) -> None:
        self.routes = routes
        self.sent: dict[str, int] = defaultdict(int)
        self.requests: dict[str, int] = defaultdict(int)
        self.stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> SlowServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(server: SlowServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"slow": server})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes
    slow: SlowServer

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self._play()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._play()

    def _play(self) -> None:
        path = self.path.split("?")[0]
        behaviour = self.slow.routes.get(path)
        self.slow.requests[path] += 1
        if behaviour is None:
            self.send_error(404)
            return
        try:
            self._answer(path, behaviour)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up, as it should

    def _answer(self, path: str, behaviour: Behaviour) -> None:
        if isinstance(behaviour, Fixed):
            failing = self.slow.requests[path] <= behaviour.fail_first
            self.send_response(503 if failing else behaviour.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(behaviour.body)))
            self.end_headers()
            self.wfile.write(behaviour.body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if isinstance(behaviour, Drip):
            self._drip(path, behaviour)
        else:
            self._flood(path, behaviour)

    def _drip(self, path: str, drip: Drip) -> None:
        self._send(path, b'{"x": "')
        while not self.slow.stopping.wait(drip.interval_s):
            self._send(path, b"a")

    def _flood(self, path: str, flood: Flood) -> None:
        chunk = b"a" * 65536
        while self.slow.sent[path] < flood.total and not self.slow.stopping.is_set():
            self._send(path, chunk)

    def _send(self, path: str, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()
        self.slow.sent[path] += len(data)
