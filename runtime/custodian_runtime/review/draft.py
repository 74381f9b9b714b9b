"""What a person typed into the queue, kept as a draft review is: every card's choice and reason,
each group's and the page's choice, the shared reason and the name stay as typed until the item
is decided or the person clears them, whichever button sent the form (a card's own, a group's,
a refused one). Pure: the session keeps the draft (review/asked.py), the handlers fill it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

CHOICES = ("approve", "reject")
EVERY = ""  # the key of the page's own choice, "every item shown", among the group choices
MAX_KEPT = 500  # cards' entries kept per session: a page shows fewer
Form = dict[str, list[str]]


@dataclass(frozen=True)
class Typed:
    """What a person typed into the queue's forms: kept between pages, shown when refused."""

    by: str = ""
    reasons: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    selected: frozenset[str] = frozenset()
    bulk_reason: str = ""
    choices: dict[str, str] = field(default_factory=dict)  # approve or reject, per item
    groups: dict[str, str] = field(default_factory=dict)  # per group key; EVERY: the page's


def _one(form: Form, key: str) -> str:
    return form.get(key, [""])[0]


def typed_from(form: Form) -> Typed:
    """The draft a queue's form carries: each card's choice and reason, each group's choice."""
    ids = [i for i in form.get("ids", []) if i]
    keys = [*dict.fromkeys(form.get("groups", [])), EVERY]
    picked = {i: _one(form, f"choice-{i}") for i in ids}
    chose = {k: _one(form, group_field(k)) for k in keys}
    return Typed(
        by=_one(form, "by").strip(),
        reasons={i: r for i in ids if (r := _one(form, f"reason-{i}"))},
        choices={i: c for i, c in picked.items() if c in CHOICES},
        groups={k: c for k, c in chose.items() if c in CHOICES},
        bulk_reason=_one(form, "reason"),
    )


def group_field(key: str) -> str:
    """The form field of a group's choice (`all` for the page's, every item shown)."""
    return f"all-{key}" if key else "all"


def merged(old: Typed, new: Typed, form: Form) -> Typed:
    """`new` over `old`: what the form showed is as the form says (an emptied field is empty),
    what it did not show (another filter's cards) is kept as it was."""
    shown = {i for i in form.get("ids", []) if i}
    keys = {*form.get("groups", []), EVERY}
    reasons = {i: r for i, r in old.reasons.items() if i not in shown} | new.reasons
    choices = {i: c for i, c in old.choices.items() if i not in shown} | new.choices
    groups = {k: c for k, c in old.groups.items() if k not in keys} | new.groups
    return Typed(
        by=new.by or old.by,
        reasons=_newest(reasons),
        choices=_newest(choices),
        groups=groups,
        bulk_reason=new.bulk_reason if "reason" in form else old.bulk_reason,
    )


def _newest(entries: dict[str, str]) -> dict[str, str]:
    return dict(list(entries.items())[-MAX_KEPT:])


def without(typed: Typed, decided: set[str]) -> Typed:
    """The draft once `decided` are decided: their choices and reasons go."""
    return replace(
        typed,
        reasons={i: r for i, r in typed.reasons.items() if i not in decided},
        choices={i: c for i, c in typed.choices.items() if i not in decided},
    )
