"""One request in, one answer out: what the HTTP server and the in-process transport share.

The framing rules (body length, chunked bodies, the 1 MiB cap), the error answers and the
headers of every answer are made here once, so a hub reached over a socket and a hub reached
in-process answer byte for byte alike (`Date` aside).
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from custodian_hub._app import HubApp, HubRequest, HubResponse, WriteAborted
from custodian_hub._endpoints import all_endpoints
from custodian_hub._routes import match
from custodian_hub._store import is_busy
from custodian_hub._wire import ApiError, dumps

log = logging.getLogger("custodian_hub")

MAX_BODY_BYTES = 1024 * 1024
# The methods the HTTP server dispatches to the app; any other gets 405 (or 404) untouched.
HANDLED_METHODS = frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "TRACE"})
SERVER_NAME = "custodian-reference-hub"
# What http.server sends as `Server`: its name and the Python version.
SERVER_HEADER = f"{SERVER_NAME} Python/{sys.version.split()[0]}"


@dataclass(frozen=True)
class Answer:
    """An answer ready to send: status, headers in order, payload (empty for HEAD), and whether
    the connection closes after it."""

    status: int
    headers: tuple[tuple[str, str], ...]
    payload: bytes
    close: bool


# Another process holds the database past the store's busy timeout: nothing was written, and the
# same request (same idempotency key) may be sent again.
BUSY = HubResponse(
    503,
    {"detail": "the hub's database is busy with another writer; try again", "code": "unavailable"},
    {"Retry-After": "1"},
)


def answer(
    app: HubApp,
    method: str,
    target: str,
    headers: Mapping[str, str],
    read_body: Callable[[int], bytes],
    *,
    close: bool = False,
) -> Answer:
    """The app's answer to one request (`headers` with lower-case names); `close` when the client
    asked for it. Raises `WriteAborted` when an `on_write` hook failed: send nothing then."""
    try:
        body = _read_body(headers, read_body)
        response = app.handle(HubRequest(method, target, headers, body))
    except ApiError as err:
        return encode(error_response(err), method, close=True)
    except WriteAborted:
        raise
    except Exception as exc:
        response = _failure(exc, method, target)
    return encode(response, method, close=close)


def _failure(exc: Exception, method: str, target: str) -> HubResponse:
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        return BUSY
    log.exception("reference hub failed on %s %s", method, target)
    return HubResponse(500, {"detail": "internal error", "code": "internal_error"})


def refusal(method: str | None, target: str, code: int, detail: str) -> Answer:
    """The answer to a request the server could not hand to the app: a broken request line, or a
    method it does not know (405 with `Allow` on a known path, else 404)."""
    err = unknown_method(method or "", target) if code == 501 else ApiError(code, detail)
    return encode(error_response(err), method, close=True)


def unknown_method(method: str, target: str) -> ApiError:
    """The error for a method no route takes: 405 with `Allow` on a known path, else 404."""
    try:
        match(method, urlsplit(target).path, all_endpoints())
    except ApiError as err:
        return err
    return ApiError(405, f"{method} is not allowed on {target}")  # no route takes it; unreachable


def error_response(err: ApiError) -> HubResponse:
    """An API error as an answer: the contract's error body and the error's headers."""
    return HubResponse(err.status, err.body(), err.headers)


def encode(response: HubResponse, method: str | None, *, close: bool) -> Answer:
    """The answer's bytes and headers: JSON, its length, the response's own headers.

    A 304 (Not Modified) has no body, so it sends neither a type nor a length.
    """
    payload, framing = b"", []
    if response.status != 304:
        payload = dumps(response.body)
        framing = [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
    headers = [*framing, *response.headers.items()]
    if close:
        headers.append(("Connection", "close"))
    return Answer(response.status, tuple(headers), b"" if method == "HEAD" else payload, close)


def _read_body(headers: Mapping[str, str], read_body: Callable[[int], bytes]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise ApiError(400, "chunked request bodies are not supported; send Content-Length")
    raw_length = headers.get("content-length", "0").strip() or "0"
    if not raw_length.isdigit():
        raise ApiError(400, "Content-Length must be a whole number")
    length = int(raw_length)
    if length > MAX_BODY_BYTES:
        raise ApiError(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
    return read_body(length) if length else b""
