"""Every idempotency key Custodian sends, and the run id of an approval's attempt.

Keys are written into journals and remembered by the hub for 24 hours: a reconcile re-sends a
killed run's write with the key its `authorized` record holds, and an approval retried after a
crash must be replayed, not made twice. A changed format would re-send writes after an upgrade,
so these strings stay exactly as they are (tests/test_keys.py pins them).
"""

from __future__ import annotations

import re
from datetime import timedelta

# The hub forgets an idempotency key after 24 hours; past that a re-send is a second write.
IDEMPOTENCY_WINDOW = timedelta(hours=24)

_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]")


def _safe(text: str) -> str:
    return _KEY_UNSAFE.sub("_", text)


def run_key(run_id: str, fp: str) -> str:
    """The key of one plan item of one run: printable ASCII, at most 255 characters."""
    run = _safe(run_id)[:200] or "run"
    return f"custodian-{run}-{_safe(fp[:32])}"


def escalation_key(run_id: str, index: str, fp: str) -> str:
    """The key of a flag raised while reconciling (`index` is `reconcile-<n>`)."""
    return run_key(run_id, f"{index}-{fp}")


def approval_key(approval_id: str, fp: str) -> str:
    """The key of one approval: stable across its retries, new for every other approval.

    An equal proposal approved again later is a new write, so the key names the approval, not
    only the fingerprint (the hub would replay the first answer and change nothing).
    """
    approval = _safe(approval_id)[:120] or "approval"
    return f"custodian-approval-{approval}-{_safe(fp[:32])}"


def attempt_run_id(approval_id: str, nonce: str) -> str:
    """The journal run id of one attempt at an approval; the shell draws `nonce` fresh each time.

    A retried approval must not reuse an earlier attempt's run id; its key stays the item's.
    """
    return f"approval-{approval_id}-{nonce}"
