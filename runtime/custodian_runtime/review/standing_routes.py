"""The Standing pages: a domain's modes, grants and agreement (`/standing?domain=D`), and the
confirmation of an issue or a revoke (`/standing/confirm/<nonce>`); their forms' routing."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from custodian_runtime.clock import utc_now
from custodian_runtime.core.redact import redact
from custodian_runtime.person.shards import shards
from custodian_runtime.review.asked import AskedGrant, SessionState
from custodian_runtime.review.grant_forms import GrantAnswer, GrantHandlers, GrantTyped
from custodian_runtime.review.queue_forms import Form, FormAnswer, one
from custodian_runtime.review.standing_data import domains, standing_view
from custodian_runtime.settings import Settings

STANDING_PATH = "/standing"
ASKED_GRANT_PATH = re.compile(r"^/standing/confirm/(?P<nonce>[\w-]{1,64})$")
POSTS = {"/standing/issue", "/standing/revoke", "/standing/confirm"}
Render = Callable[..., Any]


@dataclass
class StandingPages:
    """Renders the Standing pages with the server's `render(template, status, **values)`."""

    settings: Settings
    state: SessionState
    render: Render

    def _known(self) -> dict[str, Settings]:
        """Every domain a shard's memory knows -> that shard (the first, if two know it)."""
        found: dict[str, Settings] = {}
        for shard in reversed(shards(self.settings)):
            found |= dict.fromkeys(domains(shard), shard)
        return dict(sorted(found.items()))

    def _handlers(self, domain: str) -> GrantHandlers:
        """The grant forms of the shard that keeps `domain` (an issue or revoke is journaled
        there, under its lock)."""
        shard = self._known().get(domain, self.settings)
        return GrantHandlers(shard, self.state)

    def get(self, path: str, csrf: str, query: str, by: str, *, peek: bool = False) -> Any:
        """The Standing page, or a confirmation open in this session; None: not ours."""
        if path == STANDING_PATH:
            domain = parse_qs(query).get("domain", [""])[0]
            return self.page(csrf, domain, GrantTyped(values={"by": by}), peek=peek)
        if match := ASKED_GRANT_PATH.match(path):
            return self.confirmation(csrf, match["nonce"])
        return None

    def page(
        self, csrf: str, domain: str, typed: GrantTyped, status: int = 200, *, peek: bool = False
    ) -> Any:
        """One domain's standing, or the list of domains to choose from."""
        where = self._known()
        known = list(where)
        flashes = self.state.flashes(csrf, peek=peek)
        if not domain and len(known) == 1:
            domain = known[0]
        if domain not in known:
            if domain:  # only a domain memory/ knows: reading another would create its files
                typed = GrantTyped(typed.key, typed.values, _unknown(domain))
            return self.render("standing.html.j2", status, known=known, view=None,
                               flashes=flashes, csrf=csrf, typed=typed)  # fmt: skip
        view = standing_view(where[domain], domain, utc_now())
        return self.render(
            "standing.html.j2", status, known=known, view=view, flashes=flashes, csrf=csrf,
            typed=typed, hub=self._hub_name(),
        )  # fmt: skip

    def _hub_name(self) -> str:
        hub = self.settings.hub
        shown = "not configured" if hub is None else "embedded" if hub.embedded else hub.url
        return redact(shown)

    def confirmation(self, csrf: str, nonce: str) -> Any:
        """The confirmation of an issue or a revoke: the sentence again, one deliberate button."""
        asked = self.state.peek(csrf, nonce)
        if not isinstance(asked, AskedGrant):
            message = "This confirmation is not open; start again from the Standing page."
            return self.render("message.html.j2", 404, title="Not found", message=message)
        return self.render("grant_confirm.html.j2", asked=asked, nonce=nonce, csrf=csrf)

    def post(self, path: str, form: Form, csrf: str) -> GrantAnswer:
        """Issue or revoke (each asks for a confirmation first), or confirm."""
        domain = one(form, "domain")
        if path == "/standing/confirm":
            asked = self.state.peek(csrf, one(form, "nonce"))
            of = asked.domain if isinstance(asked, AskedGrant) else ""
            return self._handlers(of).confirm(form, csrf)
        if domain not in self._known():
            return GrantAnswer(FormAnswer(422), "", GrantTyped(problem=_unknown(domain)))
        if path == "/standing/revoke":
            return self._handlers(domain).ask_revoke(domain, form, csrf)
        return self._handlers(domain).ask_issue(domain, form, csrf)


def _unknown(domain: str) -> str:
    return (
        f"No journal or approval item in memory/ names the domain {domain!r}: choose one of "
        "the domains above. Nothing was issued or revoked."
    )
