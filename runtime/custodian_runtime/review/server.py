"""The HTTP side of `custodian review`: stdlib ThreadingHTTPServer, every request guarded.

Order of checks: the Host header, then the token (query, first visit) or the session cookie,
then for a POST the CSRF token. Any failure is a 403 and nothing is read or written.
"""

from __future__ import annotations

import getpass
import socket
import sys
import threading
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TextIO
from urllib.parse import parse_qs, unquote, urlsplit

from custodian_runtime.core.approvals.decider import name_problem, proxy_decider
from custodian_runtime.errors import ConfigError
from custodian_runtime.review.auth import COOKIE, Guard, cookie_value, host_header, read_tokens
from custodian_runtime.review.views import Page, Views
from custodian_runtime.settings import Settings

# The queue is one form: every card's reason (2,000 characters, up to 4 bytes each once encoded)
# goes with any button, so a page of many cards, each with a long reason, still fits.
MAX_BODY = 2 * 1024 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
WILDCARD = ("0.0.0.0", "::", "")


class _Handler(BaseHTTPRequestHandler):
    server: ReviewHTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 60  # an idle kept-alive connection does not hold a thread for ever
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the token must not land in a log, and a person's terminal stays clean."""

    def _send(self, page: Page) -> None:
        self.send_response(page.status)
        for name, value in {**HEADERS, **page.headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", page.content_type)
        self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(page.body)

    def _forbidden(self, why: str) -> None:
        # Said in the answer, not only done: a client that keeps the connection for its next
        # request would otherwise find it closed under it.
        self.close_connection = True
        body = f"403 forbidden: {why}\n".encode()
        self._send(Page(403, body, "text/plain; charset=utf-8", {"Connection": "close"}))

    def _session(self) -> str | None:
        """The request's session, or None after answering 403 (or 303 for a first visit)."""
        session: str | None
        guard = self.server.guard
        if not guard.host_ok(self.headers.get("Host")):
            self._forbidden("the Host header does not name this server")
            return None
        parts = urlsplit(self.path)
        people = self.server.views.settings.people
        signed_in = None
        if people.user_header is not None:
            found = proxy_decider(
                people.user_header,
                self.headers.get(people.user_header),
                self.client_address[0],
                people.trusted_proxies,
            )
            if isinstance(found, str):
                self._forbidden(found)
                return None
            signed_in = found.name
        opens = guard.opens(parts.query) if parts.query else None
        if opens is not None:
            # First visit: trade the token for a session cookie, and drop it from the address.
            self._open_session(parts.path, opens if signed_in is None else signed_in)
            return None
        session = guard.session(self.headers.get("Cookie"))
        if signed_in is not None and (session is None or guard.name_of(session) != signed_in):
            # The proxy signed this person in: their session, bound to their name (a form
            # posted without it is not taken: the page opens again, for them).
            where = f"{parts.path}?{parts.query}" if parts.query else parts.path
            self._open_session(where, signed_in)
            return None
        if session is None:
            self._forbidden("open the address with the token that `custodian review` printed")
        return session

    def _open_session(self, path: str, name: str) -> None:
        guard = self.server.guard
        session = guard.new_session(name)
        headers = {"Location": path or "/", "Set-Cookie": guard.set_cookie(session)}
        self._send(Page(303, b"", "text/plain; charset=utf-8", headers))

    def do_GET(self) -> None:
        """Serve a page."""
        session = self._session()
        if session is None:
            return
        parts, guard = urlsplit(self.path), self.server.guard
        typed = cookie_value(self.headers.get("Cookie"), self.server.views.name_cookie)
        by = guard.name_of(session) or self.server.os_name or unquote(typed or "")
        head = self.command == "HEAD"
        csrf = guard.csrf_for(session)
        self._send(self.server.views.get(parts.path, csrf, parts.query, by, head=head))

    do_HEAD = do_GET

    def do_POST(self) -> None:
        """Decide an approval, once the CSRF token is checked."""
        session = self._session()
        if session is None:
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            self._forbidden("the form is larger than a decision can be")
            return
        body = self.rfile.read(length).decode("utf-8", errors="replace")
        form = parse_qs(body, keep_blank_values=True)
        guard = self.server.guard
        if not guard.csrf_ok(session, form.get("csrf", [None])[0]):
            self._forbidden("the form's CSRF token is missing or wrong; reload the page")
            return
        who = guard.name_of(session) or self.server.os_name
        if who:  # the name the proxy, the token or the OS gave, never what the form says
            form = {**form, "by": [who]}
        elif not self.server.views.settings.people.typed_names:
            self._forbidden(
                "no one is signed in and typed names may not decide here: open the page through "
                "the proxy (CUSTODIAN_REVIEW_USER_HEADER) or with your own token "
                "(CUSTODIAN_REVIEW_TOKENS_FILE)"
            )
            return
        path = urlsplit(self.path).path
        self._send(self.server.views.post(path, form, guard.csrf_for(session)))


class ReviewHTTPServer(ThreadingHTTPServer):
    """The server, holding its guard and its views."""

    daemon_threads = True
    guard: Guard
    views: Views
    os_name: str = ""  # who decides on a page no proxy or token names people on, typed names off


class _ReviewHTTPServer6(ReviewHTTPServer):
    address_family = socket.AF_INET6


class ReviewServer:
    """`custodian review` bound to host:port (port 0 picks a free one)."""

    def __init__(self, settings: Settings, host: str = "127.0.0.1", port: int = 8750) -> None:
        people = settings.people
        # Read before the port is bound: a bad file is a ConfigError, and nothing is left open.
        tokens = None if people.tokens_file is None else read_tokens(people.tokens_file)
        os_name = _os_user() if people.page_source == "os" else ""
        server_class = _ReviewHTTPServer6 if ":" in host else ReviewHTTPServer
        self.httpd = server_class((host, port), _Handler)
        self.port = int(self.httpd.server_address[1])
        shown = socket.gethostname() if host in WILDCARD else host
        self.address = host_header(shown, self.port)
        public = settings.review_url
        hosts = {self.address.lower(), *([] if public is None else [urlsplit(public).netloc])}
        self.httpd.guard = Guard(
            allowed_hosts=frozenset(hosts), cookie=f"{COOKIE}_{self.port}", people=tokens
        )
        self.httpd.views = Views(settings, name_cookie=f"{COOKIE}_by_{self.port}")
        self.httpd.os_name = os_name
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The start address, with the token."""
        return f"http://{self.address}/?token={self.httpd.guard.token}"

    def start(self) -> ReviewServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
        self.httpd.server_close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def review_command(
    settings: Settings, host: str, port: int, open_browser: bool, out: TextIO = sys.stdout
) -> int:
    """Serve until interrupted; print the address with its token first."""
    server = ReviewServer(settings, host, port)
    out.write(f"custodian review: {server.url}\n")
    if host in WILDCARD or (not host.startswith("127.") and host not in ("localhost", "::1")):
        out.write(
            "custodian review: listening beyond this machine; anyone with the token can decide\n"
        )
    out.flush()
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


def _os_user() -> str:
    """The OS user who runs the page: who decides when no proxy or token names people and typed
    names are off (core/approvals/decider.py); a ConfigError when there is no usable one."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no such user in the passwd database, no USER/LOGNAME
        name = ""
    problem = name_problem(name, "the OS user name")
    if problem is not None:
        raise ConfigError(
            f"{problem}: no one to decide as on the page; set CUSTODIAN_REVIEW_USER_HEADER or "
            "CUSTODIAN_REVIEW_TOKENS_FILE, or CUSTODIAN_TYPED_NAMES=1 to let a typed name decide",
            setting="CUSTODIAN_TYPED_NAMES",
        )
    return name
