"""The idempotency keys, pinned: they are on disk in journals and in the hub's 24-hour memory.

A reconcile re-sends a killed run's write with the key its `authorized` record holds, and a
retried approval is replayed by the hub under its key. Were a format to change, an upgrade
would send those writes a second time, so these strings must never change.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import custodian_runtime
from custodian_runtime.core.keys import (
    IDEMPOTENCY_WINDOW,
    approval_key,
    attempt_run_id,
    escalation_key,
    run_key,
)

FP = "0123456789abcdef" * 4


def test_a_plan_items_key_names_the_run_and_the_fingerprint() -> None:
    assert run_key("r20261130T080000Z-1a2b3c", FP) == (
        "custodian-r20261130T080000Z-1a2b3c-0123456789abcdef0123456789abcdef"
    )
    assert run_key("", FP) == "custodian-run-0123456789abcdef0123456789abcdef"
    assert run_key("a b/ç", "x y") == "custodian-a_b__-x_y"
    assert run_key("r" * 300, FP) == f"custodian-{'r' * 200}-{FP[:32]}"


def test_a_reconcile_flags_key_names_its_position() -> None:
    assert escalation_key("r1", "reconcile-0", FP) == (
        "custodian-r1-reconcile-0-0123456789abcdef0123"
    )


def test_an_approvals_key_names_the_approval_not_the_run() -> None:
    assert approval_key("apr-0123456789ab", FP) == (
        "custodian-approval-apr-0123456789ab-0123456789abcdef0123456789abcdef"
    )
    assert approval_key("apr-0123456789ab-2", FP) != approval_key("apr-0123456789ab", FP)
    assert approval_key("", FP) == "custodian-approval-approval-" + FP[:32]
    assert approval_key("a" * 300, FP) == f"custodian-approval-{'a' * 120}-{FP[:32]}"


def test_an_approval_attempt_gets_a_run_id_of_its_own() -> None:
    assert attempt_run_id("apr-0123456789ab", "a1b2c3") == "approval-apr-0123456789ab-a1b2c3"


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
    assert makers == ["core/keys.py"]
