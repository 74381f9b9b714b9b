"""The state a queued item is proposed under, and whether a stored item still carries it.

A queued item stores what was observed of its target when it was proposed; an approval rules on
it again only if that state still holds (core/ruling/path.py). A canon write's target is a
file the hub does not hold: the shell reads the file's hash and passes it in as a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.checks import SAME_TITLE, same_titles
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from custodian_runtime.core.view import View

TARGET_KINDS = (
    ("task_id", "task"),
    ("workstream_id", "workstream"),
    ("decision_id", "decision"),
    ("flag_id", "flag"),
)


def canon_target(operation: str, params: Mapping[str, Any]) -> str | None:
    """The canon file a write is about, whose hash the shell reads; None for any other write."""
    path = params.get("path")
    return path if writes_canon(operation) and isinstance(path, str) else None


def writes_canon(operation: str) -> bool:
    """Whether `operation` writes a canon file rather than the hub (its spec's `writes`)."""
    spec = operations.find(operation)
    return spec is not None and spec.writes == "canon"


def _creates(operation: str) -> bool:
    spec = operations.find(operation)
    return spec is not None and spec.creates is not None


def proposed_under(
    item: ProposedItem, observed: DomainSummary, canon_sha256: str | None = None
) -> dict[str, Any]:
    """What a queued item stores, and what an approval compares it with.

    A canon write is proposed against its file as it is now (`canon_sha256`, None for a file
    that does not exist yet), which the hub does not hold; any other write against `observed`.
    """
    if canon_target(item.operation, item.params) is not None:
        return {"file_sha256": canon_sha256}
    return precondition(item, observed)


def precondition(item: ProposedItem, observed: DomainSummary) -> dict[str, Any]:
    """The observed state on the hub a queued item was proposed under.

    The target (task, decision, flag, or a workstream that is itself the target) gives id, status
    and updated_at where it has one; a create gives its parent workstream's id and status (one
    without a parent workstream gives the domain), and `same_title`: the ids that already bear
    its title (none when it is proposed; an approval finds it changed if one appeared since).
    A canon write gives {}: its state is its file's hash (`proposed_under`).
    """
    view = View.of(observed)
    params = item.params
    if writes_canon(item.operation):
        return {}
    parent_only = _creates(item.operation)
    state: dict[str, Any] = {}
    for key, kind in TARGET_KINDS:
        value = params.get(key)
        if not isinstance(value, str):
            continue
        snapshot = view.snapshot(kind, value, updated=not parent_only)
        if snapshot is not None:
            state[kind] = snapshot
    if parent_only:
        if "workstream" not in state:
            # Created on the domain itself: the domain is what it was proposed under.
            state["domain"] = {"id": observed.domain}
        state[SAME_TITLE] = same_titles(item.operation, params, view)
    return state


def edited_problem(
    operation: str, params: dict[str, Any], fp: str, stored: Mapping[str, Any], domain: str
) -> str | None:
    """Why a queued item, as stored, cannot be the one that was queued (None when it can be).

    Its fingerprint must be that of its operation and params, and its precondition must be
    non-empty (except for an operation with no target) and about the targets its params name.
    """
    if fp != fingerprint(operation, params):
        return "its fingerprint does not match its operation and params (edited after queuing)"
    if writes_canon(operation):
        return None
    if not stored or (_creates(operation) and SAME_TITLE not in stored):
        return (
            f"it stores no precondition, but {operation} has a target whose state must be "
            "checked again"
        )
    stored = {k: v for k, v in stored.items() if k != SAME_TITLE}
    named = {kind: params[key] for key, kind in TARGET_KINDS if isinstance(params.get(key), str)}
    if not named:  # a decision recorded on the domain itself
        named = {"domain": domain}
    held = {kind: (snap or {}).get("id") for kind, snap in stored.items() if isinstance(snap, dict)}
    if held != named or set(stored) != set(named):
        return "its precondition is about other targets than its params (edited after queuing)"
    return None
