"""The pages: routing a request to what it shows, rendered by jinja2 with autoescape on.

Every string a template prints passes `for_prose` first (controls and bidi characters shown as
escapes), then HTML escaping; the only markup that is not escaped is a note's HTML, which
markdown-it built from escaped text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, quote

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

import custodian_runtime.review.pages as pages
from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.authority.precondition import writes_canon
from custodian_runtime.core.inert import for_prose
from custodian_runtime.core.redact import redact
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person.shards import shards
from custodian_runtime.review._sentence import facts_of
from custodian_runtime.review.asked import Asked, AskedGroup, SessionState
from custodian_runtime.review.grant_forms import GrantAnswer, GrantTyped
from custodian_runtime.review.group_forms import GROUP_CONFIRM, GROUP_PATH, GroupHandlers
from custodian_runtime.review.pending import pending_views, read_domains
from custodian_runtime.review.queue import (
    MAX_HISTORY,
    Filter,
    Queue,
    decided,
    history,
    past,
    queue,
)
from custodian_runtime.review.queue_forms import (
    DecisionHandlers,
    Form,
    FormAnswer,
    Typed,
    pending_item,
)
from custodian_runtime.review.run_groups import by_decision
from custodian_runtime.review.shards import every, first_of, in_shards, item_of, notes_of
from custodian_runtime.review.standing_routes import POSTS as STANDING_POSTS
from custodian_runtime.review.standing_routes import StandingPages
from custodian_runtime.review.waiting import WaitingItems, together
from custodian_runtime.settings import Settings

CSS_PATH = "/static/review.css"
JS_PATH = "/static/review.js"  # keys for the queue; every page works without it
RUN_PATH = re.compile(r"^/runs/(?P<run_id>[A-Za-z0-9._:-]{1,200})$")
NOTE_PATH = re.compile(r"^/notes/(?P<name>[A-Za-z0-9._-]{1,200})$")
RUNS_PAGE_PATH = re.compile(r"^/runs/page/(?P<n>[1-9][0-9]{0,5})$")
DECIDE_PATH = re.compile(r"^/approvals/(?P<id>[A-Za-z0-9-]{1,100})$")
CONFIRM_PATH = re.compile(r"^/approvals/(?P<id>[A-Za-z0-9-]{1,100})/confirm$")
ASKED_PATH = re.compile(r"^/approvals/(?P<id>[A-Za-z0-9-]{1,100})/confirm/(?P<nonce>[\w-]{1,64})$")
BULK_PATH = "/reject-selected"
CLEAR_PATH = "/clear-choices"
NAME_COOKIE = "custodian_review_by"


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

    def __init__(self, settings: Settings, name_cookie: str = NAME_COOKIE) -> None:
        self.settings = settings
        self.env = environment()
        # No proxy, no tokens, typed names off: the page decides as the OS user, shown read-only.
        self.env.globals["name_fixed"] = settings.people.page_source == "os"
        static = files("custodian_runtime.review").joinpath("static")
        self.static = {
            CSS_PATH: Page(
                200, static.joinpath("review.css").read_bytes(), "text/css; charset=utf-8"
            ),
            JS_PATH: Page(
                200, static.joinpath("review.js").read_bytes(), "text/javascript; charset=utf-8"
            ),
        }
        self.state = SessionState()
        self.deciding = DecisionHandlers(settings, self.state)
        self.grouped = GroupHandlers(settings, self.state)
        self.name_cookie = name_cookie
        self.standing = StandingPages(settings, self.state, self._render)
        # Every domain's pending items, between requests: one keeper per shard's memory.
        self.shards = shards(settings)
        self.waiting = [WaitingItems() for _ in self.shards]

    def _store(self, shard: Settings | None = None) -> ApprovalStore:
        settings = self.settings if shard is None else shard
        return ApprovalStore(settings.memory_dir, settings.seal_key)

    def _queue(self, keep: Filter) -> Queue:
        now = utc_now()
        parts = [
            w.pending(self._store(s), now) for s, w in zip(self.shards, self.waiting, strict=True)
        ]
        return queue(together(parts), keep)

    def _render(
        self, template: str, status: int = 200, waiting: Queue | None = None, **values: Any
    ) -> Page:
        counts = self._queue(Filter()) if waiting is None else waiting
        html = self.env.get_template(template).render(
            css=CSS_PATH, js=JS_PATH, waiting=counts, **values
        )
        return Page(status, html.encode("utf-8"))

    def _live(self, ids: Iterable[str]) -> list[ApprovalItem]:
        """The items of `ids` that still wait, each read alone (never the whole queue)."""
        now = utc_now()
        found = (pending_item(self.settings, i, now) for i in dict.fromkeys(ids))
        return sorted((i for i in found if i is not None), key=lambda i: (i.created_at, i.id))

    def not_found(self, what: str) -> Page:
        """404 with a line that says what was not found."""
        return self._render("message.html.j2", 404, title="Not found", message=what)

    def get(
        self, path: str, csrf: str, query: str = "", by: str = "", *, head: bool = False
    ) -> Page:
        """The page at `path` for a session whose CSRF token is `csrf` (`head`: a HEAD request,
        which leaves the session's flash messages for the next GET)."""
        if path in self.static:
            return self.static[path]
        if path in ("/", "/approvals"):
            draft = self.state.draft(csrf)
            typed = replace(draft, by=draft.by or by)
            return self.approvals(csrf, Filter.parse(query), typed, peek=head)
        if path == "/runs":
            return self.runs(1)
        if match := RUNS_PAGE_PATH.match(path):
            return self.runs(int(match["n"]))
        if path == BULK_PATH:
            ids = parse_qs(query).get("ids", [])
            return self.selected(csrf, ids, Typed(by))
        if path == "/history":
            return self.history(Filter.parse(query).domain)
        if match := GROUP_CONFIRM.match(path):
            return self.group_confirmation(match["nonce"], csrf)
        if match := DECIDE_PATH.match(path):
            return self.item(match["id"])
        if match := ASKED_PATH.match(path):
            return self.confirmation(match["id"], match["nonce"], csrf)
        standing: Page | None = self.standing.get(path, csrf, query, by, peek=head)
        return self._record_or_note(path) if standing is None else standing

    def _record_or_note(self, path: str) -> Page:
        if match := RUN_PATH.match(path):
            run_id: str = match["run_id"]
            record = first_of(self.settings, lambda s: pages.court_record(s, run_id))
            if record is None:
                return self.not_found(f"no run {run_id} in any journal")
            shown = first_of(self.settings, lambda s: pages.canon_shown(s, run_id) or None)
            return self._render("record.html.j2", run_id=run_id, record=record, canon=shown or ())
        if match := NOTE_PATH.match(path):
            name: str = match["name"]
            note = first_of(self.settings, lambda s: pages.note(s, name))
            if note is None:
                return self.not_found(f"no note {name} in memory/working")
            ran = first_of(self.settings, lambda s: pages.note_run(s, name))
            # A run is one shard's: the writes it ran under a grant are in that shard's journal.
            found = (
                first_of(self.settings, lambda s: pages.granted(s, ran) or None) if ran else None
            )
            uses = found or []
            return self._render("note.html.j2", note=note, html=Markup(note.html), uses=uses)
        return self.not_found(f"no page {path}")

    def runs(self, page: int) -> Page:
        """Page `page` of every domain's runs (1 = the newest)."""
        found = every(self.settings, lambda s: pages.domain_runs(s, page))
        domains = sorted(found, key=lambda d: d.domain)
        last = max((d.pages for d in domains), default=1)
        return self._render("runs.html.j2", domains=domains, page=page, last=last)

    def approvals(
        self, csrf: str, keep: Filter, typed: Typed, status: int = 200, *, peek: bool = False
    ) -> Page:
        """The pending queue (the landing page): oldest first, filtered, each with its form."""
        now = utc_now()
        shown = self._queue(keep)
        items = in_shards(self.settings, list(shown.items), now)
        groups = by_decision(items, shown.order)
        hub = self.settings.hub
        hub_name = "not configured" if hub is None else "embedded" if hub.embedded else hub.url
        return self._render(
            "approvals.html.j2",
            status,
            waiting=shown,
            items=items,
            groups=groups,
            queue=shown,
            keep=keep,
            typed=typed,
            notes=notes_of(self.settings, {i.domain for i in shown.items}),
            csrf=csrf,
            flashes=self.state.flashes(csrf, peek=peek),
            hub=redact(hub_name),
        )

    def history(self, domain: str = "") -> Page:
        """Decided items (of `domain`, or all), the latest first, with titles read from the hub
        once per domain."""
        now = utc_now()
        done = every(self.settings, lambda s: decided(self._store(s), now))
        done.sort(key=lambda i: i.decided_at or i.expires_at, reverse=True)
        items = [i for i in done if not domain or i.domain == domain][:MAX_HISTORY]
        read = read_domains(
            self.settings, {i.domain for i in items if not writes_canon(i.operation)}
        )
        facts = {d: facts_of(s) for d, s in read.items() if not isinstance(s, str)}
        granted = sorted(every(self.settings, pages.granted), key=lambda u: u.at, reverse=True)
        uses = [u for u in granted if not domain or u.domain == domain]
        shown = history(items, now, facts)
        known = sorted({i.domain for i in done})
        return self._render("history.html.j2", items=shown, uses=uses, domain=domain, known=known)

    def item(self, approval_id: str) -> Page:
        """One item, pending or decided: what it was and what became of it."""
        item, shard = item_of(self.settings, approval_id)
        if item is None or shard is None:
            return self.not_found(f"no approval item {approval_id}")
        now = utc_now()
        view = pending_views(shard, self._store(shard), now, [item])[0]
        return self._render("item.html.j2", v=view, past=past(item, effective_status(item, now)))

    def confirmation(self, approval_id: str, nonce: str, csrf: str) -> Page:
        """The confirmation step of an approval: the sentence again, and one deliberate button."""
        asked = self.state.peek(csrf, nonce)
        if not isinstance(asked, Asked) or asked.approval_id != approval_id:
            return self.not_found("this confirmation is not open; approve again from the queue")
        item, shard = item_of(self.settings, approval_id)
        if item is None or shard is None:
            return self.not_found(f"no approval item {approval_id}")
        view = pending_views(shard, self._store(shard), utc_now(), [item])[0]
        return self._render("confirm.html.j2", v=view, asked=asked, nonce=nonce, csrf=csrf)

    def group_confirmation(self, nonce: str, csrf: str) -> Page:
        """The one confirmation of a group: every chosen item's sentence, in the plan's order."""
        asked = self.state.peek(csrf, nonce)
        if not isinstance(asked, AskedGroup):
            return self.not_found("this confirmation is not open; choose again in the queue")
        live = self._live(c.approval_id for c in asked.chosen)
        views = {v.item.id: v for v in in_shards(self.settings, live, utc_now())}
        return self._render(
            "group_confirm.html.j2", asked=asked, views=views, nonce=nonce, csrf=csrf
        )

    def selected(self, csrf: str, ids: list[str], typed: Typed, status: int = 200) -> Page:
        """The items ticked for a reject together, with one form for the name and reason."""
        now = utc_now()
        chosen = self._live(ids)
        items = in_shards(self.settings, chosen, now)
        values: dict[str, Any] = {"items": items, "typed": typed, "csrf": csrf, "next": "/"}
        return self._render("bulk.html.j2", status, **values)

    def post(self, path: str, form: Form, csrf: str) -> Page:
        """Decide: every form answers with a redirect, or the queue again with what was typed."""
        if path in STANDING_POSTS:
            return self._granted(self.standing.post(path, form, csrf), csrf)
        if path == BULK_PATH:
            answer = self.deciding.reject_many(form, csrf)
            if answer.location is None:
                typed = answer.typed or Typed()
                page = self.selected(csrf, sorted(typed.selected), typed, answer.status)
                return self._with_name(page, answer)
            return self._answer(answer, csrf, form)
        if path == CLEAR_PATH:
            self.state.clear_draft(csrf)
            keep = Filter.parse(form.get("next", [""])[0].partition("?")[2])
            return Page(303, b"", "text/plain; charset=utf-8", {"Location": f"/{keep.query}"})
        if path == GROUP_PATH:
            return self._answer(self.grouped.ask(form, csrf), csrf, form)
        if match := GROUP_CONFIRM.match(path):
            return self._answer(self.grouped.confirm(match["nonce"], form, csrf), csrf, form)
        if match := CONFIRM_PATH.match(path):
            return self._answer(self.deciding.confirm(match["id"], form, csrf), csrf, form)
        if match := DECIDE_PATH.match(path):
            return self._answer(self.deciding.decide_one(match["id"], form, csrf), csrf, form)
        return self.not_found(f"nothing to post to at {path}")

    def _granted(self, answer: GrantAnswer, csrf: str) -> Page:
        """A grant form's answer: its redirect, or the Standing page again with what was typed."""
        if answer.answer.location is not None:
            page = Page(answer.answer.status, b"", "text/plain; charset=utf-8")
            return self._with_name(page, answer.answer, {"Location": answer.answer.location})
        typed = answer.typed or GrantTyped()
        page = self.standing.page(csrf, answer.domain, typed, answer.answer.status)
        return self._with_name(page, answer.answer)

    def _answer(self, answer: FormAnswer, csrf: str, form: Form) -> Page:
        if answer.location is not None:
            page = Page(answer.status, b"", "text/plain; charset=utf-8")
            return self._with_name(page, answer, {"Location": answer.location})
        keep = Filter.parse(form.get("next", [""])[0].partition("?")[2])
        page = self.approvals(csrf, keep, answer.typed or Typed(), answer.status)
        return self._with_name(page, answer)

    def _with_name(
        self, page: Page, answer: FormAnswer, more: dict[str, str] | None = None
    ) -> Page:
        """The page, remembering the decider's name for the session (HttpOnly, SameSite)."""
        headers = dict(more or {})
        if answer.by:
            value = quote(answer.by, safe="")
            headers["Set-Cookie"] = f"{self.name_cookie}={value}; HttpOnly; SameSite=Strict; Path=/"
        return Page(page.status, page.body, page.content_type, {**page.headers, **headers})
