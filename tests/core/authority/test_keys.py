"""The idempotency keys, pinned: they are on disk in journals and in the hub's 24-hour memory.

A reconcile re-sends a killed run's write with the key its `authorized` record holds (read back,
never rebuilt). Every authorization's key ends with its own random nonce, so an equal proposal
authorized again, in a later run or a later approval, is a new write for the hub.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import custodian_runtime
from custodian_runtime.core.journal.keys import (
    IDEMPOTENCY_WINDOW,
    approval_key,
    attempt_run_id,
    escalation_key,
    run_key,
)

FP = "0123456789abcdef" * 4
NONCE = "a1b2c3d4e5f6"


def test_a_plan_items_key_names_the_run_the_fingerprint_and_the_nonce() -> None:
    assert run_key("r20261130T080000Z-1a2b3c", FP, NONCE) == (
        "custodian-r20261130T080000Z-1a2b3c-0123456789abcdef0123456789abcdef-a1b2c3d4e5f6"
    )
    assert run_key("", FP, NONCE) == f"custodian-run-{FP[:32]}-{NONCE}"
    assert run_key("a b/ç", "x y", "n/1") == "custodian-a_b__-x_y-n_1"
    assert run_key("r" * 300, FP, NONCE) == f"custodian-{'r' * 180}-{FP[:32]}-{NONCE}"
    assert len(run_key("r" * 300, FP * 2, NONCE * 3)) <= 255


def test_a_reconcile_flags_key_names_its_position() -> None:
    assert escalation_key("r1", "reconcile-0", FP, NONCE) == (
        "custodian-r1-reconcile-0-0123456789abcdef0123-a1b2c3d4e5f6"
    )


def test_an_approvals_key_names_the_approval_and_the_authorization() -> None:
    assert approval_key("apr-01234567-89ab", FP, NONCE) == (
        f"custodian-approval-apr-01234567-89ab-0123456789abcdef0123456789abcdef-{NONCE}"
    )
    # The same approval authorized again (a new nonce) is a new key.
    assert approval_key("apr-01234567-89ab", FP, "ffffffffffff") != approval_key(
        "apr-01234567-89ab", FP, NONCE
    )
    assert approval_key("", FP, NONCE) == f"custodian-approval-approval-{FP[:32]}-{NONCE}"
    assert approval_key("a" * 300, FP, NONCE) == (
        f"custodian-approval-{'a' * 120}-{FP[:32]}-{NONCE}"
    )


def test_an_approval_attempt_gets_a_run_id_of_its_own() -> None:
    assert attempt_run_id("apr-01234567-89ab", "a1b2c3") == "approval-apr-01234567-89ab-a1b2c3"


def test_the_hub_forgets_a_key_after_a_day() -> None:
    assert timedelta(hours=24) == IDEMPOTENCY_WINDOW


def test_no_module_outside_core_keys_makes_a_key() -> None:
    # One definition: any other `custodian-...` or `approval-...` id built in the package is a
    # second format that could drift from the pinned one.
    root = Path(custodian_runtime.__file__).parent
    formats = ('f"custodian-{', 'f"custodian-approval-', 'f"approval-{')
    makers = [
        path.relative_to(root).as_posix()
        for path in sorted(root.rglob("*.py"))
        if any(f in path.read_text(encoding="utf-8") for f in formats)
    ]
    assert makers == ["core/journal/keys.py"]
