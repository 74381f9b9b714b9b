"""The pages: routing a request to what it shows, rendered by jinja2 with autoescape on.

Every string a template prints passes `for_prose` first (controls and bidi characters shown as
escapes), then HTML escaping; the only markup that is not escaped is a note's HTML, which
markdown-it built from escaped text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from custodian_runtime.clock import utc_now
from custodian_runtime.core.inert import for_prose
from custodian_runtime.core.redact import redact
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.review import pages
from custodian_runtime.review.decide import Decided, decide
from custodian_runtime.review.pending import pending_views
from custodian_runtime.settings import Settings

CSS_PATH = "/static/review.css"
RUN_PATH = re.compile(r"^/runs/(?P<run_id>[A-Za-z0-9._:-]{1,200})$")
NOTE_PATH = re.compile(r"^/notes/(?P<name>[A-Za-z0-9._-]{1,200})$")
RUNS_PAGE_PATH = re.compile(r"^/runs/page/(?P<n>[1-9][0-9]{0,5})$")
DECIDE_PATH = re.compile(r"^/approvals/(?P<id>[A-Za-z0-9-]{1,100})$")
MAX_BY, MAX_REASON = 100, 2000


@dataclass(frozen=True)
class Page:
    """An answer: status, content type and body."""

    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


def _inert(value: Any) -> Any:
    if isinstance(value, Markup) or not isinstance(value, str):
        return "" if value is None else value
    return for_prose(value)


def environment() -> Environment:
    """The page templates; autoescape on, every printed string made inert first."""
    return Environment(
        loader=PackageLoader("custodian_runtime.review", "templates"),
        autoescape=True,
        finalize=_inert,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class Views:
    """Renders the pages of one `custodian review` server."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.env = environment()
        self.css = files("custodian_runtime.review").joinpath("static/review.css").read_bytes()

    def _render(self, template: str, status: int = 200, **values: Any) -> Page:
        html = self.env.get_template(template).render(css=CSS_PATH, **values)
        return Page(status, html.encode("utf-8"))

    def not_found(self, what: str) -> Page:
        """404 with a line that says what was not found."""
        return self._render("message.html.j2", 404, title="Not found", message=what)

    def get(self, path: str, csrf: str) -> Page:
        """The page at `path` for a session whose CSRF token is `csrf`."""
        if path == CSS_PATH:
            return Page(200, self.css, "text/css; charset=utf-8")
        if path == "/":
            return self.runs(1)
        if match := RUNS_PAGE_PATH.match(path):
            return self.runs(int(match["n"]))
        if path == "/approvals":
            return self.approvals(csrf)
        if match := RUN_PATH.match(path):
            record = pages.court_record(self.settings, match["run_id"])
            if record is None:
                return self.not_found(f"no run {match['run_id']} in any journal")
            return self._render("record.html.j2", run_id=match["run_id"], record=record)
        if match := NOTE_PATH.match(path):
            note = pages.note(self.settings, match["name"])
            if note is None:
                return self.not_found(f"no note {match['name']} in memory/working")
            return self._render("note.html.j2", note=note, html=Markup(note.html))
        return self.not_found(f"no page {path}")

    def runs(self, page: int) -> Page:
        """Page `page` of every domain's runs (1 = the newest)."""
        domains = pages.domain_runs(self.settings, page)
        last = max((d.pages for d in domains), default=1)
        return self._render("runs.html.j2", domains=domains, page=page, last=last)

    def approvals(self, csrf: str, status: int = 200, decided: Decided | None = None) -> Page:
        """Pending approvals, each with its form."""
        store = ApprovalStore(self.settings.memory_dir, self.settings.seal_key)
        items = pending_views(self.settings, store, utc_now())
        hub = self.settings.hub
        hub_name = "not configured" if hub is None else "embedded" if hub.embedded else hub.url
        notes = pages.run_notes(self.settings)
        return self._render(
            "approvals.html.j2",
            status,
            items=items,
            notes=notes,
            csrf=csrf,
            decided=decided,
            hub=redact(hub_name),
        )

    def post(self, path: str, form: dict[str, str], csrf: str) -> Page:
        """Approve or reject one item; the answer is the approvals page with the outcome."""
        match = DECIDE_PATH.match(path)
        if match is None:
            return self.not_found(f"nothing to post to at {path}")
        decision, by = form.get("decision", ""), form.get("by", "").strip()
        reason = form.get("reason", "").strip() or None
        problem = _form_problem(decision, by, reason)
        if problem is not None:
            return self._render("message.html.j2", 400, title="Not decided", message=problem)
        decided = decide(self.settings, match["id"], decision, by, reason)
        return self.approvals(csrf, 200 if decided.ok else 409, decided)


def _form_problem(decision: str, by: str, reason: str | None) -> str | None:
    if decision not in ("approve", "reject"):
        return "the decision must be approve or reject; nothing was decided"
    if not by or len(by) > MAX_BY:
        return f"say who decides in 'by' (1 to {MAX_BY} characters); nothing was decided"
    if decision == "reject" and reason is None:
        return "a reject needs a reason; nothing was decided"
    if reason is not None and len(reason) > MAX_REASON:
        return f"the reason is longer than {MAX_REASON} characters; nothing was decided"
    return None
