"""The reference state-hub: serves contract v1.2 of the state-hub API for local runs and tests.

Standard library only (`http.server.ThreadingHTTPServer` and `sqlite3`): the runtime's
dependencies stay httpx, pydantic, jinja2 and tenacity, so running a local hub never pulls in a
web stack. It binds 127.0.0.1 by default. Use it in-process::

    with ReferenceHub(Path("hub.sqlite3"), token="t") as hub:
        ...  # talk to hub.url

or from the command line with `custodian hub serve` (see `_serve.py`).

Where the contract is silent, this hub:
- generates ids as `<kind>-<6 digits>` (`evt-000042`), skipping ids a seed already took;
- answers 405 `method_not_allowed` with `Allow` for a known path and another method, 413
  `payload_too_large` above 1 MiB, 400 for chunked bodies, unknown or repeated query parameters;
- answers 400 to an empty query value (`?domain=`): leave a parameter out for no filter; a filter
  on an unknown domain or id gives an empty list (only path resources answer 404);
- records idempotency keys for successful writes only: a refused write changed nothing, so its key
  may be retried; the body is compared as canonical JSON (key order does not matter);
- bumps a workstream's `updated_at` when one of its tasks is created or changes status;
- makes a `hub_id` (`hub-<16 hex>`) once per database and grows a domain's `revision` on every
  write that succeeds in it; answers `If-None-Match` on a domain summary with 304 and no body;
- on an `on_write` hook that raises, rolls back (`before_commit`) or keeps the commit
  (`after_commit`) and drops the connection without an answer, as a crashed hub would.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from custodian_hub._app import Clock, HubApp, WriteAborted, WriteHook
from custodian_hub._exchange import SERVER_NAME, Answer, answer, refusal
from custodian_hub._store import Store
from custodian_runtime.clock import utc_now

log = logging.getLogger("custodian_hub")

IDLE_TIMEOUT_S = 60.0
# How often the serving loop checks for stop(); stop() waits up to this long.
_POLL_INTERVAL_S = 0.01


class ReferenceHub:
    """A hub on a daemon thread: `start()` it, talk to `url`, `stop()` it (or use `with`)."""

    def __init__(
        self,
        db_path: Path,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Clock | None = None,
        on_write: WriteHook | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.token = token
        self.host = host
        self.port = port
        self.clock: Clock = clock or utc_now
        self.on_write = on_write
        self._server: _HubServer | None = None
        self._thread: threading.Thread | None = None
        self._store: Store | None = None

    @property
    def url(self) -> str:
        """The base URL, e.g. `http://127.0.0.1:54321`; the port is known once started."""
        if self._server is None:
            raise RuntimeError("the hub is not running: call start() first")
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def bind(self) -> ReferenceHub:
        """Take the port without touching the database; `start()` binds too when not yet bound."""
        if self._server is not None:
            raise RuntimeError("the hub is already bound")
        self._server = _HubServer((self.host, self.port))
        return self

    def start(self) -> ReferenceHub:
        """Bind the port (first, so a busy port leaves no database), open the database, serve."""
        if self._thread is not None:
            raise RuntimeError("the hub is already running")
        server = self._server or self.bind()._server
        assert server is not None
        try:
            store = Store(self.db_path)
        except BaseException:
            self._server = None
            server.server_close()
            raise
        server.app = HubApp(store, token=self.token, clock=self.clock, on_write=self.on_write)
        self._store = store
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL_S},
            name=f"reference-hub-{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and close the database; safe to call twice."""
        server, thread, store = self._server, self._thread, self._store
        self._server = self._thread = self._store = None
        if server is None:
            return
        if thread is not None:  # shutdown() waits for serve_forever, which a bound hub never ran
            server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        if store is not None:
            store.close()

    def __enter__(self) -> ReferenceHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class _HubServer(ThreadingHTTPServer):
    daemon_threads = True
    app: HubApp  # set by ReferenceHub.start(), once the port is bound and the database open

    def __init__(self, address: tuple[str, int]) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Cut kept-alive connections so no handler thread outlives the hub."""
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = SERVER_NAME
    timeout = IDLE_TIMEOUT_S
    # Headers and body leave in two writes; without this, Nagle and delayed ACKs add 40 ms.
    disable_nagle_algorithm = True
    server: _HubServer

    def do_GET(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            reply = answer(
                self.server.app,
                self.command,
                self.path,
                headers,
                self.rfile.read,
                close=self.close_connection,
            )
        except WriteAborted:
            log.info(
                "on_write hook aborted %s %s; dropping the connection", self.command, self.path
            )
            self.close_connection = True
            return
        self._send(reply)

    do_HEAD = do_POST = do_PATCH = do_PUT = do_DELETE = do_OPTIONS = do_TRACE = do_GET

    def _send(self, reply: Answer) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = self.close_connection or reply.close
        self.wfile.write(reply.payload)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own errors (bad request line, unknown method) get the contract's body too.
        detail = message or explain or "the request cannot be read"
        self.close_connection = True
        # A request line too broken to name its version still gets a status line and headers.
        self.request_version = "HTTP/1.0"
        # A request line too long or too broken to read never set `path`.
        self._send(refusal(self.command, getattr(self, "path", ""), code, detail))

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - " + format, self.address_string(), *args)
