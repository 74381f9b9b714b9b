"""Every idempotency key Custodian sends, and the run id of an approval's attempt.

Keys are written into journals and remembered by the hub for 24 hours. Every authorization
draws a random nonce in the shell (`new_nonce` there; the core stays pure) and its key ends with
it: transport retries and a reconcile's re-send of that authorization reuse the key its
`authorized` record holds, and any other authorization, of an equal proposal too, has a key of
its own. Keys already in a journal are read back, never rebuilt, so an open write keeps its key
across an upgrade (tests/core/authority/test_keys.py pins the formats).
"""

from __future__ import annotations

import re
from datetime import timedelta

# The hub forgets an idempotency key after 24 hours; past that a re-send is a second write.
IDEMPOTENCY_WINDOW = timedelta(hours=24)

_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]")


def _safe(text: str) -> str:
    return _KEY_UNSAFE.sub("_", text)


# The nonce's length in hex digits (48 random bits per authorization).
NONCE_HEX = 12


def run_key(run_id: str, fp: str, nonce: str) -> str:
    """The key of one authorization of one plan item: printable ASCII, at most 255 characters."""
    run = _safe(run_id)[:180] or "run"
    return f"custodian-{run}-{_safe(fp[:32])}-{_safe(nonce[:NONCE_HEX])}"


def escalation_key(run_id: str, index: str, fp: str, nonce: str) -> str:
    """The key of a flag raised while reconciling (`index` is `reconcile-<n>`)."""
    return run_key(run_id, f"{index}-{fp}", nonce)


def approval_key(approval_id: str, fp: str, nonce: str) -> str:
    """The key of one authorization of an approved item: new for every authorization.

    An equal proposal approved again later is a new write, so the key carries the
    authorization's nonce (the hub would replay the first answer and change nothing).
    """
    approval = _safe(approval_id)[:120] or "approval"
    return f"custodian-approval-{approval}-{_safe(fp[:32])}-{_safe(nonce[:NONCE_HEX])}"


def attempt_run_id(approval_id: str, nonce: str) -> str:
    """The journal run id of one attempt at an approval; the shell draws `nonce` fresh each time.

    A retried approval must not reuse an earlier attempt's run id.
    """
    return f"approval-{approval_id}-{nonce}"
