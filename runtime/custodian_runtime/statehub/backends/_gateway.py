"""What every tracker backend shares: the contract's refusals, the answer to a tracker's own
refusal, and the gateway that turns a contract request into the tracker's answer."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from custodian_runtime.clock import utc_now

Reply = tuple[int, Any, dict[str, str]]  # status, JSON body (None: no body), headers
_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 409: "conflict"}


class Refused(Exception):
    """An answer of the contract's: status, machine code, detail (and extra body fields)."""

    def __init__(
        self,
        status: int,
        detail: str,
        code: str | None = None,
        *,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code or _CODES.get(status, "validation_error")
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})


def refused_for(response: httpx.Response, detail: str, sign_in: str) -> Refused:
    """The contract's answer to a tracker's refusal: a sign-in problem says how to sign in
    (`sign_in`), an overload keeps its Retry-After, anything else is the request's fault."""
    status = response.status_code
    if status in (401, 403):
        return Refused(401, f"{detail} ({sign_in})")
    if status == 404:
        return Refused(404, detail)
    if status == 429 or status >= 500:
        retry = response.headers.get("Retry-After")
        headers = {} if retry is None else {"Retry-After": retry}
        code = "rate_limited" if status == 429 else "unavailable"
        return Refused(429 if status == 429 else 503, detail, code, headers=headers)
    return Refused(422, detail)


class Gateway(httpx.BaseTransport):
    """Answers the contract's requests from one tracker; a backend says how (`_answer`)."""

    # Errors of the tracker's data that answer 422 (a status the mapping does not know, ...).
    unmappable: tuple[type[Exception], ...] = ()

    def __init__(
        self, url: str, inner: httpx.BaseTransport, clock: Callable[[], datetime] = utc_now
    ) -> None:
        parts = urlsplit(url.rstrip("/"))
        # Who signs in reaches the tracker as the client's Basic auth, not in its URL.
        self._url = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        self._prefix = parts.path
        self._rest = self._open_rest(self._url, inner)
        self._clock = clock

    def _open_rest(self, url: str, inner: httpx.BaseTransport) -> Any:
        raise NotImplementedError

    def _answer(self, request: httpx.Request, path: str, auth: Mapping[str, str]) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        """Close the tracker's connection pool."""
        self._rest.close()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """One contract request, answered from the tracker (a lost connection rises as is)."""
        path = request.url.path
        path = path[len(self._prefix) :] if path.startswith(self._prefix) else path
        auth = {k: v for k, v in request.headers.items() if k.lower() == "authorization"}
        try:
            status, body, headers = self._answer(request, path, auth)
        except Refused as exc:
            status, headers = exc.status, exc.headers
            body = {**exc.extra, "detail": exc.detail, "code": exc.code}
        except self.unmappable as exc:
            status, headers = 422, {}
            body = {"detail": str(exc), "code": "validation_error"}
        content = b"" if body is None else json.dumps(body).encode("utf-8")
        if body is not None:
            headers = {**headers, "Content-Type": "application/json"}
        return httpx.Response(status, headers=headers, content=content, request=request)
