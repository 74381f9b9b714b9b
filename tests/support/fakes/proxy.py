"""A recording forward proxy on loopback: it notes every request, then relays it (plain HTTP)."""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te"}


@dataclass(frozen=True)
class Seen:
    """One request as the proxy received it: the absolute URL and the headers it carried."""

    method: str
    url: str
    headers: dict[str, str]


class RecordingProxy:
    """`with RecordingProxy() as proxy:` serves on 127.0.0.1; `proxy.seen` lists what passed."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _relay(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.seen.append(Seen(self.command, self.path, headers))
                length = int(headers.get("content-length", "0") or 0)
                body = self.rfile.read(length) if length else None
                target = urlsplit(self.path)
                if target.scheme != "http" or not target.hostname:
                    self.send_error(400, "this proxy relays absolute http:// URLs only")
                    return
                upstream = http.client.HTTPConnection(
                    target.hostname, target.port or 80, timeout=10
                )
                forward = {k: v for k, v in headers.items() if k not in _HOP_BY_HOP}
                path = target.path + (f"?{target.query}" if target.query else "")
                upstream.request(self.command, path or "/", body=body, headers=forward)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP_BY_HOP | {"content-length"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _relay

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
