"""Why a card offers no approve now: its target changed since it was proposed (nothing could
run), or a person set its operation's mode to `off` or `shadow` (approve waits for the mode)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.presentation.display import one_line
from custodian_runtime.core.standing.modes import ModeSetting
from custodian_runtime.errors import CustodianError
from custodian_runtime.review.standing_data import read_standing
from custodian_runtime.settings import Settings

PAUSING_MODES = ("off", "shadow")


@dataclass(frozen=True)
class CardBar:
    """What keeps approve off a card: `stale` (reject or dismiss it) or `mode` (wait)."""

    kind: str
    text: str


def mode_settings(
    settings: Settings, items: Iterable[ApprovalItem]
) -> dict[str, ModeSetting | None]:
    """The mode a person set on each item's operation in its domain (None: the default), by
    item id; a domain whose standing cannot be read gives none here (Standing says why)."""
    chosen = list(items)
    found: dict[str, ModeSetting | None] = {}
    for domain in sorted({i.domain for i in chosen}):
        try:
            modes = read_standing(settings, domain).modes
        except CustodianError:
            continue
        for item in (i for i in chosen if i.domain == domain):
            found[item.id] = modes.settings.get(item.operation)
    return found


def paused_bar(item: ApprovalItem, setting: ModeSetting | None) -> CardBar | None:
    """The bar of a mode `off` or `shadow` on the item's operation (paused), saying who set it."""
    if setting is None or setting.mode not in PAUSING_MODES:
        return None
    when = setting.at.strftime("%Y-%m-%d %H:%M UTC")
    text = (
        f"Paused: {one_line(item.operation)} is set to {setting.mode} in {one_line(item.domain)} "
        f"by {one_line(setting.by)} ({when}: {one_line(setting.reason, 120)}). Approve stays "
        "off until a person sets the mode back (Standing); reject is open."
    )
    return CardBar("mode", text)


def stale_bar(changes: tuple[str, ...], verdict: str | None) -> CardBar | None:
    """The bar of a target that changed or is gone: approving could run nothing."""
    if not changes and not (verdict or "").startswith("stale"):
        return None
    text = (
        "Stale: its target changed since it was proposed, so approving would run nothing. "
        "Reject it with a reason, or dismiss it."
    )
    return CardBar("stale", text)
