"""Who may use the review page: the start token, a session cookie, a CSRF token, the Host.

Every check compares secrets in constant time. A request that fails any check is answered 403
before anything is read from or written to disk.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs

from custodian_runtime.core.approvals.decider import name_problem
from custodian_runtime.errors import ConfigError

COOKIE = "custodian_review"
MAX_SESSIONS = 64
MIN_TOKEN = 24  # a person's token is a secret: long enough not to be guessed
_TOKEN = re.compile(r"^[A-Za-z0-9_~.-]+$")


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
    # Per-person tokens (token -> name): set, only these open a session, each under its name.
    people: dict[str, str] | None = field(default=None, repr=False)
    _csrf_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    _sessions: OrderedDict[str, str] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def host_ok(self, host: str | None) -> bool:
        """True when the Host header names the bound address (no DNS rebinding)."""
        return host is not None and host.lower() in self.allowed_hosts

    def token_ok(self, query: str) -> bool:
        """True when the query string carries a token that opens the page."""
        return self.opens(query) is not None

    def opens(self, query: str) -> str | None:
        """Whom the query's token opens a session for: a person's name (per-person tokens),
        "" for the start token, None for no token that opens anything."""
        given = parse_qs(query).get("token", [""])[0].encode()
        if self.people is None:
            return "" if hmac.compare_digest(given, self.token.encode()) else None
        # Every token is compared, so the time taken does not tell which one matched.
        found = [n for t, n in self.people.items() if hmac.compare_digest(given, t.encode())]
        return found[0] if found else None

    def new_session(self, name: str = "") -> str:
        """A fresh session id for the cookie, opened for `name` ("" for no one in particular);
        the oldest sessions are dropped past the cap."""
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[session] = name
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

    def name_of(self, session: str) -> str:
        """The person a session was opened for ("" when a shared token opened it)."""
        with self._lock:
            return self._sessions.get(session, "")

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


def read_tokens(path: Path) -> dict[str, str]:
    """The per-person tokens of a file of `TOKEN NAME` lines (`#` starts a comment)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the review tokens file {path}: {exc}",
            setting="CUSTODIAN_REVIEW_TOKENS_FILE",
        ) from None
    people: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        token, _, name = line.strip().partition(" ")
        problem = _token_problem(token, people) or name_problem(name.strip(), "the name")
        if problem is not None:
            raise ConfigError(
                f"{path} line {number}: {problem}; each line is `TOKEN NAME`",
                setting="CUSTODIAN_REVIEW_TOKENS_FILE",
            )
        people[token] = name.strip()
    if not people:
        raise ConfigError(
            f"{path} names no one: add a `TOKEN NAME` line per person",
            setting="CUSTODIAN_REVIEW_TOKENS_FILE",
        )
    return people


def _token_problem(token: str, seen: dict[str, str]) -> str | None:
    if len(token) < MIN_TOKEN or not _TOKEN.match(token):
        return (
            f"a token is at least {MIN_TOKEN} URL-safe characters (e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return "this token is given twice: give each person their own" if token in seen else None


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
