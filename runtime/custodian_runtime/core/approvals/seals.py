"""An approval item's seal: the HMAC of its canonical JSON without the seal (core/journal/seals.py
explains the key and the prefixes: a record's seal can never pass for an item's)."""

from __future__ import annotations

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.seal_key import ITEM_PREFIX, Sealer, SealKey


def _item_message(item: ApprovalItem) -> str:
    data = item.model_dump(mode="json", exclude={"seal"})
    later = ("hub", "hub_at", "canon", "waits", "waits_code", "waiting_because", "facts")
    for unset in [k for k in later if data[k] is None]:
        del data[unset]  # an item from before items were bound (or said why) keeps its seal
    return canonical_json(data)


def item_seal(key: SealKey, item: ApprovalItem) -> str:
    """The seal of an approval item: HMAC of its canonical JSON without the seal."""
    return key.mac(ITEM_PREFIX, _item_message(item))


def item_sealer(key: SealKey, item: ApprovalItem) -> Sealer | None:
    """Which key sealed the item (None: neither, or no seal)."""
    return key.sealer(ITEM_PREFIX, _item_message(item), item.seal)


def seal_item(key: SealKey, item: ApprovalItem) -> ApprovalItem:
    """The same item with its seal set (over every other field, as they are now)."""
    return item.model_copy(update={"seal": item_seal(key, item)})


def item_seal_problem(key: SealKey, item: ApprovalItem) -> str | None:
    """Why an item's seal does not verify (None when it does)."""
    seal = item.seal
    if seal is None:
        return "carries no seal: written without the seal key, or by someone who lacks it"
    if item_sealer(key, item) is None:
        return "its seal does not match: the file was edited, or sealed with another key"
    return None
