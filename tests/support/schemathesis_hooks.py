"""A schemathesis check loaded by tests/hub/test_hub_schemathesis.py (through SCHEMATHESIS_HOOKS).

`positive_data_acceptance` must let a 422 pass: for a schema-valid body the contract still answers
422 when a task is in another workstream, or when an idempotency key was used with another body.
This check keeps the other half of that check: a body the document calls valid is never refused
by the hub's body validation.
"""

from __future__ import annotations

from typing import Any

import schemathesis

# The start of every 422 that the hub's body validation gives (custodian_hub/_app.py).
BODY_INVALID = "the request body is invalid"


@schemathesis.check
def schema_valid_bodies_pass_validation(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request is never refused as an invalid body."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    try:
        detail = str(response.json().get("detail", ""))
    except ValueError:
        return None
    if detail.startswith(BODY_INVALID):
        raise AssertionError(f"the document calls this body valid, but the hub said: {detail}")
    return None
