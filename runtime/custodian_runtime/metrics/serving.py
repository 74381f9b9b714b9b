"""`/metrics` and `/healthz` served by a long-running process, on the stdlib's http.server.

The figures are the ones a run pushes to a Pushgateway (`_registry.exposition`, per domain), and
whatever the process adds; a scrape reads them as they are when it comes. The server runs in a
daemon thread, so it never holds the process up, and answers only GET.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST

from custodian_runtime.errors import ConfigError

HealthCheck = Callable[[], str | None]  # None when healthy, else why not


class MetricsServer:
    """`/metrics` (Prometheus text) and `/healthz` (200, or 503 with why) on host:port."""

    def __init__(
        self, host: str, port: int, text: Callable[[], str | bytes], health: HealthCheck
    ) -> None:
        handler = type(
            "Handler", (_Handler,), {"text": staticmethod(text), "health": staticmethod(health)}
        )
        try:
            self._server = ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise ConfigError(
                f"cannot serve metrics on {host}:{port} ({exc.strerror}): pick another "
                "--metrics-port, or --metrics-host",
                setting="--metrics-port",
            ) from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="metrics", daemon=True
        )

    @property
    def port(self) -> int:
        """The port bound (the one asked for, or the one the system chose for 0)."""
        return int(self._server.server_address[1])

    def __enter__(self) -> MetricsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    text: Callable[[], str | bytes]
    health: HealthCheck

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            self._answer(200, self.text(), CONTENT_TYPE_LATEST)
        elif path == "/healthz":
            why = self.health()
            self._answer(200 if why is None else 503, (why or "ok") + "\n")
        else:
            self._answer(404, "not found: GET /metrics or /healthz\n")

    def _answer(
        self, status: int, body: str | bytes, kind: str = "text/plain; charset=utf-8"
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body  # bytes: UTF-8 already
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Scrapes are not logged: one every few seconds would bury the runs' lines."""
