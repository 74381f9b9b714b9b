"""The Standing page's forms: issue a grant from a suggestion, or revoke one, each through the
same confirmation step as approve, and through the functions `custodian grants issue|revoke` run.

Each answers with a redirect (POST-redirect-GET) and a flash sentence, or the page again (422)
with everything typed and the problem said inline. Nothing is issued or revoked without a
confirmation bound to the session and to the suggestion or grant as it was when it was asked.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

from custodian_runtime.clock import utc_now
from custodian_runtime.errors import ConfigError, CustodianError
from custodian_runtime.person import configured_hub
from custodian_runtime.person import standing as policy_commands
from custodian_runtime.person.carry_out import Flash
from custodian_runtime.review.asked import AskedGrant, SessionState
from custodian_runtime.review.pending import _quick
from custodian_runtime.review.queue_forms import Form, FormAnswer, by_problem, one, reason_problem
from custodian_runtime.review.standing_data import grant_state, read_standing, suggestion_state
from custodian_runtime.review.standing_history import issue_sentence
from custodian_runtime.settings import Settings

FIELDS = ("operation", "where", "max", "expires", "by", "reason")


@dataclass(frozen=True)
class GrantTyped:
    """What a person typed into an issue or revoke form, kept when the form is refused."""

    key: str = ""  # `issue:<operation>` or `revoke:<grant id>`: the form it belongs to
    values: dict[str, str] = field(default_factory=dict)
    problem: str = ""


@dataclass(frozen=True)
class IssueAsked:
    """An issue waiting for its confirmation: the request, and the hub it is bound to."""

    request: policy_commands.Issue
    hub: str


@dataclass(frozen=True)
class RevokeAsked:
    """A revoke waiting for its confirmation."""

    grant_id: str
    by: str
    reason: str


@dataclass(frozen=True)
class GrantAnswer:
    """A redirect, or the Standing page of `domain` again with what was typed."""

    answer: FormAnswer
    domain: str = ""
    typed: GrantTyped | None = None


def where_of(text: str) -> dict[str, str]:
    """`KEY=VALUE` lines as a mapping; a ValueError saying the form of a bad line."""
    found: dict[str, str] = {}
    for line in (x.strip() for x in text.splitlines()):
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"“where” line {line!r}: give KEY=VALUE, e.g. status=blocked")
        found[key.strip()] = value.strip()
    return found


def _request(domain: str, form: Form) -> policy_commands.Issue:
    """The form as `grants issue` takes it; a ValueError saying what to fix."""
    try:
        max_uses = int(one(form, "max").strip())
    except ValueError:
        raise ValueError("“at most” takes a number of uses, e.g. 10") from None
    return policy_commands.Issue(
        domain=domain, operation=one(form, "operation").strip(),
        where=where_of(one(form, "where")), max_uses=max_uses,
        expires=one(form, "expires").strip(), by=one(form, "by").strip(),
        reason=one(form, "reason").strip(), grant_id=f"grant-{secrets.token_hex(6)}",
    )  # fmt: skip


def _hub_identity(settings: Settings) -> str:
    """The configured hub's identity, as `grants issue` binds a grant to it."""
    if settings.hub is None:
        raise ConfigError(
            "This review page has no hub configured, so no grant can be bound to one: start "
            "it with --hub URL or --hub embedded (or STATE_HUB_URL). Nothing was issued."
        )
    hub = configured_hub(_quick(settings))
    if hub is None:
        raise ConfigError("The hub could not be named. Nothing was issued.")
    return hub.identity


@dataclass
class GrantHandlers:
    """The Standing page's POST handlers for one review server."""

    settings: Settings
    state: SessionState
    clock: Callable[[], datetime] = utc_now

    def ask_issue(self, domain: str, form: Form, session: str) -> GrantAnswer:
        """Check an issue and ask for its confirmation (nothing is issued yet)."""
        values = {k: one(form, k) for k in FIELDS}
        key = f"issue:{values['operation'].strip()}"
        by = values["by"].strip()
        try:
            request = _request(domain, form)
            problem = by_problem(by) or reason_problem(request.reason, True)
            if problem is not None:
                raise ValueError(_for_grants(problem, "A grant", "issued"))
            expires_in = policy_commands.expiry(request)
            hub = _hub_identity(self.settings)
            # The hub's clock, as the grant will be issued by it (a host off by more than the
            # skew is told here, before it confirms).
            issued = policy_commands.hub_now(_quick(self.settings))
        except (ValueError, CustodianError) as exc:
            text = exc.message if isinstance(exc, CustodianError) else str(exc)
            typed = GrantTyped(key, values, _sentence_end(text))
            return GrantAnswer(FormAnswer(422, by=by or None), domain, typed)
        until = issued + expires_in
        sentence = issue_sentence(
            request.operation, domain, request.where, request.max_uses, until, hub
        )
        state = suggestion_state(self.settings, domain, request.operation)
        asked = AskedGrant("issue", domain, state, sentence, IssueAsked(request, hub))
        return self._asked(asked, session, by)

    def ask_revoke(self, domain: str, form: Form, session: str) -> GrantAnswer:
        """Check a revoke and ask for its confirmation (nothing is revoked yet)."""
        grant_id, by = one(form, "grant").strip(), one(form, "by").strip()
        values = {"by": one(form, "by"), "reason": one(form, "reason")}
        reason = values["reason"].strip()
        problem = by_problem(by) or reason_problem(reason, True)
        grant = read_standing(self.settings, domain).grant(grant_id)
        if grant is None or grant.revoked:
            problem = f"{grant_id} is not a live grant of {domain}. Nothing was revoked."
        if problem is not None:
            problem = _for_grants(problem, "A revoke", "revoked")
            typed = GrantTyped(f"revoke:{grant_id}", values, problem)
            return GrantAnswer(FormAnswer(422, by=by or None), domain, typed)
        state = grant_state(self.settings, domain, grant_id, self.clock())
        sentence = f"Revoke {grant_id}, which lets Custodian {_covers(grant_id, domain, self)}"
        asked = AskedGrant(
            "revoke", domain, str(state), sentence, RevokeAsked(grant_id, by, reason)
        )
        return self._asked(asked, session, by)

    def _asked(self, asked: AskedGrant, session: str, by: str) -> GrantAnswer:
        nonce = self.state.ask(session, asked)
        location = f"/standing/confirm/{nonce}"
        return GrantAnswer(FormAnswer(303, location=location, by=by), asked.domain)

    def confirm(self, form: Form, session: str) -> GrantAnswer:
        """Carry out the issue or revoke asked for, if nothing changed since it was asked."""
        asked = self.state.take(session, one(form, "nonce"))
        if not isinstance(asked, AskedGrant) or one(form, "decision") != "confirm":
            self.state.flash(session, [Flash("standing", False, _NO_CONFIRMATION)])
            return GrantAnswer(FormAnswer(303, location="/standing"))
        back = f"/standing?domain={quote(asked.domain, safe='')}"
        if self._state_now(asked) != asked.state:
            text = f"Nothing was done: {asked.sentence}. {_CHANGED}"
            self.state.flash(session, [Flash("standing", False, text)])
            return GrantAnswer(FormAnswer(303, location=back), asked.domain)
        flash = self._carry_out(asked)
        self.state.flash(session, [flash])
        anchor = f"#grant-{flash.approval_id}" if flash.ok else ""
        return GrantAnswer(FormAnswer(303, location=back + anchor), asked.domain)

    def _state_now(self, asked: AskedGrant) -> str | None:
        wanted = asked.request
        if isinstance(wanted, IssueAsked):
            return suggestion_state(self.settings, asked.domain, wanted.request.operation)
        if isinstance(wanted, RevokeAsked):
            return grant_state(self.settings, asked.domain, wanted.grant_id, self.clock())
        return None

    def _carry_out(self, asked: AskedGrant) -> Flash:
        wanted = asked.request
        try:
            if isinstance(wanted, IssueAsked):
                done = policy_commands.issue_grant(self.settings, wanted.request, wanted.hub)
                return Flash(done.grant.id, True, _issued(asked, done))
            if not isinstance(wanted, RevokeAsked):
                raise ConfigError("Nothing to carry out: start again from the Standing page.")
            revoked = policy_commands.revoke_grant(
                self.settings, wanted.grant_id, wanted.by, wanted.reason
            )
        except CustodianError as exc:
            return Flash("standing", False, f"Nothing was done: {asked.sentence}. {exc.message}")
        return Flash(wanted.grant_id, True, _revoked(asked, revoked.holder))


def _covers(grant_id: str, domain: str, handlers: GrantHandlers) -> str:
    grant = read_standing(handlers.settings, domain).grant(grant_id)
    if grant is None:
        return "nothing"
    sentence = issue_sentence(
        grant.operation, domain, grant.where, grant.max_uses, grant.expires_at, grant.hub_id
    )
    return sentence.removeprefix("Let Custodian ")


def _issued(asked: AskedGrant, issued: policy_commands.Issued) -> str:
    said = f"Issued {issued.grant.id}: {asked.sentence}."
    if issued.holder is None:
        return said
    return (
        f"{said} A run is working on {asked.domain} right now ({issued.holder}); the grant is "
        "journaled, and takes effect, as soon as that run ends."
    )


def _revoked(asked: AskedGrant, holder: str | None) -> str:
    said = f"Revoked: {asked.sentence.removeprefix('Revoke ')}."
    if holder is None:
        return f"{said} It covers nothing from now on."
    return (
        f"{said} A run is working on {asked.domain} right now ({holder}): the revoke binds "
        "that run at once, and is journaled when it ends."
    )


def _for_grants(problem: str, noun: str, done: str) -> str:
    """A decision form's problem, said of an issue or a revoke."""
    said = problem.replace("A reject", noun)
    return said.replace("Nothing was decided", f"Nothing was {done}")


def _sentence_end(text: str) -> str:
    text = text.strip().removeprefix("grants issue: ")
    return text if text.endswith(".") else f"{text}. Nothing was issued."


_CHANGED = (
    "The grants or the agreement report changed since you asked, so nothing was issued or "
    "revoked. Read the Standing page again and decide afresh."
)
_NO_CONFIRMATION = (
    "Nothing was issued or revoked: this confirmation is no longer open (used already, or the "
    "page restarted). Start again from the Standing page."
)
