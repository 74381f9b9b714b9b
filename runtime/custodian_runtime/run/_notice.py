"""A person is told when items wait: at its end, a run that writes sends one notice to the
configured webhook when the domain's waiting items are not the set the last notice told
(core/approvals/notice.py), journaled before it is sent and receipted after.

Never twice for one set: the `notice` record goes to the journal first, and the checkpoint
keeps its digest. A webhook that refused or could not be reached is receipted `failed` and told
again by the next run; one that did not answer is `unknown` and not told again (it may have
arrived). A notice never fails the run.
"""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

import httpx

from custodian_runtime.core.approvals.notice import Notice, notice_for
from custodian_runtime.core.journal.kinds import NoticeReceipt, NoticeSent
from custodian_runtime.core.redact import redact
from custodian_runtime.errors import CustodianError
from custodian_runtime.run._context import RunContext

DEADLINE_S = 10.0


def tell_waiting(ctx: RunContext, transport: httpx.BaseTransport | None = None) -> None:
    """Send the notice the domain's waiting items call for, if any (not in a dry run, nor in a
    run told to stop)."""
    if ctx.notify_url is None or ctx.dry_run or ctx.stop.signal is not None:
        return  # a run told to stop starts no new request; the next run tells
    try:
        now = ctx.now()
        waiting = ctx.approvals.view(ctx.domain, now).pending(now)
        notice = notice_for(ctx.domain, waiting, ctx.last_notice, ctx.review_url)
        if notice is None:
            return
        to = urlsplit(ctx.notify_url).hostname or "?"
        ctx.journal.write(NoticeSent(digest=notice.digest, waiting=notice.waiting, to=to))
    except CustodianError as exc:  # the queue or the journal could not be read: said, no notice
        ctx.log.line("notice", "not sent", error=exc.message[:300])
        return
    receipt = send(ctx.notify_url, notice, transport)
    with contextlib.suppress(CustodianError):  # the `notice` record stands: not told again
        ctx.journal.write(receipt)
    ctx.log.line(
        "notice", receipt.outcome or "?", waiting=notice.waiting, status=receipt.status,
        error=receipt.error,
    )  # fmt: skip


def send(url: str, notice: Notice, transport: httpx.BaseTransport | None = None) -> NoticeReceipt:
    """POST the notice's JSON; what came of it, as the journal keeps it."""
    try:
        with httpx.Client(
            transport=transport, timeout=DEADLINE_S, follow_redirects=False, trust_env=False
        ) as client:
            answer = client.post(url, json=notice.body())
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # nothing reached the webhook
        return _receipt(notice, "failed", error=redact(f"{type(exc).__name__}: {exc}"))
    except httpx.HTTPError as exc:  # sent, no answer: it may have arrived
        return _receipt(notice, "unknown", error=redact(f"{type(exc).__name__}: {exc}"))
    ok = 200 <= answer.status_code < 300
    return _receipt(notice, "sent" if ok else "failed", status=answer.status_code)


def _receipt(
    notice: Notice, outcome: str, status: int | None = None, error: str | None = None
) -> NoticeReceipt:
    fields = {"digest": notice.digest, "outcome": outcome, "status": status, "error": error}
    return NoticeReceipt(**{k: v for k, v in fields.items() if v is not None})
