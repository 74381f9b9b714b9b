"""What a scenario's seed holds, for the eval's `must_not_invent`: its ids and people's events.

The eval judges the model's text apart from the authority that rules on it: a write that names
an id the seed does not hold, rests on an event or task the seed does not hold, or repeats a
person's event as if new (nearly, in other words, or quoted without naming it), made something
up, whatever the ruling was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core._normalized import normalized_text
from custodian_runtime.core.authority.grounded import id_shaped, without_ids
from custodian_runtime.core.operations.near import nearly_repeats
from custodian_runtime.core.view import OWN_SOURCE


@dataclass(frozen=True)
class SeedFacts:
    """What a scenario's seed holds, for `must_not_invent`: every id (casefolded) and the id-shaped
    words of people's texts, and people's events (id, text)."""

    ids: frozenset[str] = frozenset()
    events: tuple[tuple[str, str], ...] = ()
    # The events and tasks a progress event may rest on (casefolded).
    grounds: frozenset[str] = frozenset()

    @classmethod
    def of_seed(cls, seed: Mapping[str, Any]) -> SeedFacts:
        """From a seed in the hub's `--seed` JSON shape."""
        rows = [r for key in _SEED_TABLES for r in seed.get(key, []) if isinstance(r, dict)]
        people = [r for r in rows if _by(r) != OWN_SOURCE]  # Custodian's own text grounds nothing
        texts = [str(r.get(k, "")) for r in people for k in _SEED_TEXTS if k in r]
        ids = {str(r.get("id", "")) for r in rows} | {w for t in texts for w in id_shaped(t)}
        events = tuple(
            (str(e.get("id")), str(e.get("summary", "")))
            for e in seed.get("events", [])
            if isinstance(e, dict) and _by(e) != OWN_SOURCE
        )
        grounds = {str(r.get("id", "")) for key in ("tasks", "events") for r in seed.get(key, [])
                   if isinstance(r, dict)}  # fmt: skip
        return cls(
            frozenset(i.casefold() for i in ids if i),
            events,
            frozenset(i.casefold() for i in grounds if i),
        )

    def unfounded(self, rests: object) -> str | None:
        """What a write says it rests on that is no event or task of the seed, or None."""
        if not isinstance(rests, list | tuple):
            return None
        absent = [str(i) for i in rests if str(i).casefold() not in self.grounds]
        return f"rests on {', '.join(absent)}" if absent else None

    def invented(self, text: str) -> str | None:
        """What `text` makes up (an id the seed lacks, a person's event copied), or None."""
        unknown = [w for w in id_shaped(text) if w.casefold() not in self.ids]
        if unknown:
            return f"names {', '.join(unknown)}"
        mine, named = normalized_text(text), text.casefold()
        for event_id, summary in self.events:
            if nearly_repeats(without_ids(text), without_ids(summary)):
                return f"repeats event {event_id}"
            theirs = normalized_text(summary)
            copied = theirs == mine or (len(theirs) >= 24 and theirs in mine)
            if theirs and copied and event_id.casefold() not in named:
                return f"repeats event {event_id}"
        return None


def _by(row: Mapping[str, Any]) -> str:
    return str(row.get("source") or row.get("raised_by") or "").strip().lower()


_SEED_TABLES = ("workstreams", "tasks", "events", "flags", "decisions")
_SEED_TEXTS = ("title", "description", "summary", "note", "context")
