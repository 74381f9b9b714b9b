"""Helpers the operation specs share: how a task reads, what a create would duplicate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from custodian_runtime.core._normalized import normalized_text
from custodian_runtime.core.operations._spec import Landing, Lookup, Params
from custodian_runtime.core.operations.near import nearly_repeats
from custodian_runtime.core.operations.schema import SANCTIONED_STATUSES, short
from custodian_runtime.core.view import View, with_run_mark

__all__ = ["SANCTIONED_STATUSES"]


def article(word: str) -> str:
    """`a` or `an` before `word`."""
    return "an" if word[:1] in "aeiou" else "a"


def in_domain(lookup: Lookup) -> str:
    """` in website`, or nothing when the domain is unknown."""
    return f" in {lookup.domain}" if lookup.domain else ""


def quoted(text: object, limit: int = 80) -> str:
    """Text from the model, cut short, in quotes."""
    value = str(text)
    return f"“{value if len(value) <= limit else value[: limit - 1] + '…'}”"


def marked(text: str, run_id: str) -> str:
    """Every write names the run that made it, so a person can find the note and journal."""
    return with_run_mark(text, run_id)


def status_arrow(params: Params, lookup: Lookup) -> str:
    """`(todo → cancelled)`, or `(→ cancelled)` when the current status is unknown."""
    before = lookup.statuses.get(str(params.get("task_id")))
    return f"({before} → {params.get('status')})" if before else f"(→ {params.get('status')})"


def already_status(params: Params, view: View) -> str | None:
    """Why a status write would change nothing: the task already has that status."""
    current = view.task_status(params["task_id"])
    return f"task {params['task_id']} is already {current}" if current == params["status"] else None


def status_landed(params: Params, landing: Landing) -> str | None:
    """A status write found done: the task has the status it sets."""
    found = landing.view.tasks.get(str(params.get("task_id")))
    return found.id if found is not None and found.status == params.get("status") else None


def same_titles(pool: list[Any], title: object) -> list[str]:
    """Ids in `pool` whose title is `title`, normalized."""
    if not isinstance(title, str):
        return []
    wanted = normalized_text(title)
    return sorted(item.id for item in pool if normalized_text(item.title) == wanted)


def near_titles(pool: list[Any], title: object) -> list[tuple[str, str]]:
    """(id, title) of what in `pool` `title` nearly repeats in other words
    (core/operations/near.py), other than what bears `title` itself."""
    if not isinstance(title, str):
        return []
    wanted = normalized_text(title)
    found = [item for item in pool if normalized_text(item.title) != wanted]
    return sorted((i.id, i.title) for i in found if nearly_repeats(title, i.title))


def nearly(what: str, found: list[tuple[str, str]], where: str) -> str | None:
    """Why a create is denied as a near repeat: it names the one (or ones) it repeats."""
    if not found:
        return None
    named = ", ".join(f"{ident} {short(title)}" for ident, title in found[:3])
    return f"it nearly repeats {what} {named}, open {where}, in other words; use that one"


def near_elsewhere(what: str, found: list[tuple[str, str]], where: str) -> str | None:
    """Why a create is asked: it nearly repeats (or bears the title of) an open one elsewhere."""
    if not found:
        return None
    named = ", ".join(f"{ident} {short(title)}" for ident, title in found[:3])
    return (
        f"it nearly repeats {what} {named}, open {where}; a person decides whether it is new, "
        "and no grant carries it"
    )


def titled(what: str, ids: list[str], title: object) -> str | None:
    """Why a create would duplicate: `what` `title` (ids)."""
    return f"{what} {short(title)} ({', '.join(ids)})" if ids else None


def created(ids: list[str], landing: Landing) -> str | None:
    """A create found done: an item with its title that was not there when it was ruled."""
    new = [i for i in ids if i not in landing.before]
    return new[0] if new else None


def closed(target: object, still_open: Mapping[str, object]) -> str | None:
    """A resolve found done: its decision or flag is no longer open."""
    return target if isinstance(target, str) and target not in still_open else None
