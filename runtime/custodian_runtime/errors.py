"""One small hierarchy of errors. Each carries fields, and each message says how to fix it."""

from __future__ import annotations

from typing import Any


class CustodianError(Exception):
    """Base of every error the runtime raises on purpose; `exit_code` is what the CLI returns."""

    exit_code = 1

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


class ConfigError(CustodianError):
    """A setting is missing or wrong: the person running Custodian must change it (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message, setting=setting)
        self.setting = setting


class HubError(CustodianError):
    """The state-hub could not be reached, or answered with an error."""

    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        detail: str | None = None,
        method: str | None = None,
        url: str | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(
            message,
            status=status,
            code=code,
            detail=detail,
            method=method,
            url=url,
            attempts=attempts,
        )
        self.status = status
        self.code = code
        self.detail = detail
        self.method = method
        self.url = url
        self.attempts = attempts


class HubUnavailable(HubError):
    """Transport errors, timeouts, 429 or 5xx that outlasted the retry budget."""


class HubRequestError(HubError):
    """The hub refused the request (4xx other than 429): retrying it unchanged cannot help."""


class ObservationRejected(HubError):
    """The hub's summary is not of the domain asked for, or repeats an id (exit 3)."""

    def __init__(self, message: str, *, domain: str, problem: str) -> None:
        super().__init__(message, code="observation_rejected", detail=problem)
        self.domain = domain
        self.problem = problem


class ModelError(CustodianError):
    """The model call failed, or its answer cannot be used as a plan source (exit 4)."""

    exit_code = 4

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        stderr_tail: str | None = None,
        attempts: int = 1,
        answer: str | None = None,
    ) -> None:
        super().__init__(
            message,
            provider=provider,
            status=status,
            code=code,
            request_id=request_id,
            retryable=retryable,
            stderr_tail=stderr_tail,
            attempts=attempts,
        )
        # What the model did answer when the answer cannot be used (cut off at the token
        # limit, refused): kept, bounded, in the journal for `inspect` (never a plan).
        self.answer = answer
        self.provider = provider
        self.status = status
        self.code = code
        self.request_id = request_id
        self.retryable = retryable
        self.stderr_tail = stderr_tail
        self.attempts = attempts


class PlanRejected(CustodianError):
    """The model's answer has no usable action plan (none, several, or invalid JSON) (exit 4)."""

    exit_code = 4


class Interrupted(CustodianError):
    """SIGINT or SIGTERM stopped a wait; the exit code is 128 + the signal (130 or 143)."""

    def __init__(self, message: str, *, signum: int) -> None:
        super().__init__(message, signum=signum)
        self.signum = signum
        self.exit_code = 128 + signum


class RunLocked(CustodianError):
    """Another run for the same domain has the lock (exit 75, EX_TEMPFAIL)."""

    exit_code = 75


class RunNotFound(CustodianError):
    """No journal holds the run asked for (exit 2, as `inspect` answers)."""

    exit_code = 2


class JournalError(CustodianError):
    """The journal is damaged in a way the runtime must not paper over."""

    exit_code = 6


class SealError(JournalError):
    """With a seal key configured, a journal record or approval item carries no valid seal."""


class ApprovalError(CustodianError):
    """An approval cannot be acted on as asked (unknown id, wrong status, stale state)."""

    exit_code = 2


class PruneRefused(CustodianError):
    """A prune would drop a write still open; nothing was removed (exit 2)."""

    exit_code = 2


class SettleRefused(CustodianError):
    """`journal settle` names no open write (or no write at all); nothing was journaled (exit 2)."""

    exit_code = 2
