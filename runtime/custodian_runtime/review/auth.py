"""Who may use the review page: the start token, a session cookie, a CSRF token, the Host.

Every check compares secrets in constant time. A request that fails any check is answered 403
before anything is read from or written to disk.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs

COOKIE = "custodian_review"
MAX_SESSIONS = 64


def host_header(host: str, port: int) -> str:
    """The Host header a browser sends for this address, e.g. `127.0.0.1:8750` or `[::1]:8750`."""
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}"


@dataclass
class Guard:
    """The page's secrets: the start token, live sessions, and the key CSRF tokens derive from."""

    allowed_hosts: frozenset[str]
    # One name per port: two review pages on one machine do not overwrite each other's cookie.
    cookie: str = COOKIE
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    _csrf_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    _sessions: OrderedDict[str, None] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def host_ok(self, host: str | None) -> bool:
        """True when the Host header names the bound address (no DNS rebinding)."""
        return host is not None and host.lower() in self.allowed_hosts

    def token_ok(self, query: str) -> bool:
        """True when the query string carries the start token."""
        given = parse_qs(query).get("token", [""])[0]
        return hmac.compare_digest(given.encode(), self.token.encode())

    def new_session(self) -> str:
        """A fresh session id for the cookie; the oldest sessions are dropped past the cap."""
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[session] = None
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return session

    def session(self, cookie_header: str | None) -> str | None:
        """The live session the cookie names, or None."""
        given = cookie_value(cookie_header, self.cookie)
        if given is None:
            return None
        with self._lock:
            live = list(self._sessions)
        found = [s for s in live if hmac.compare_digest(s.encode(), given.encode())]
        return found[0] if found else None

    def csrf_for(self, session: str) -> str:
        """The CSRF token of a session: an HMAC of its id, put in each form's hidden field."""
        return hmac.new(self._csrf_key, session.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: str, given: str | None) -> bool:
        """True when a POST carries its session's CSRF token."""
        return given is not None and hmac.compare_digest(
            given.encode(), self.csrf_for(session).encode()
        )

    def set_cookie(self, session: str) -> str:
        """The Set-Cookie header value: HttpOnly, SameSite=Strict, for the whole page."""
        return f"{self.cookie}={session}; HttpOnly; SameSite=Strict; Path=/"


def cookie_value(header: str | None, name: str) -> str | None:
    """The value of cookie `name` in a Cookie header, or None."""
    if not header:
        return None
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(header)
    except CookieError:
        return None
    morsel = cookie.get(name)
    return morsel.value if morsel is not None else None
