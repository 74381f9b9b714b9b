"""The domain's grants at the report's clock: which are live, and which a person's reversal
suspended (and why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from custodian_runtime.core.standing.commands import where_label
from custodian_runtime.core.standing.grants import Grant, state_of


@dataclass(frozen=True)
class Live:
    """The domain's grants and their uses, at the report's clock."""

    grants: Sequence[Grant] = ()
    uses: Mapping[str, int] = field(default_factory=dict)
    now: datetime | None = None
    # Writes made under each grant that a person then reversed, where that is known.
    reversed: Mapping[str, int] = field(default_factory=dict)
    # Grants a person's reversal suspended, with why (core/standing/narrowed.py).
    suspended: Mapping[str, str] = field(default_factory=dict)
    # The facts (workstream, owner) of the reversed write that suspended each grant, where
    # recorded (core/standing/narrowed.py).
    reversed_on: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def reversed_in(self, operation: str) -> list[tuple[Grant, Mapping[str, str]]]:
        """The suspended grants of `operation` whose reversed write's facts are recorded."""
        return [
            (g, self.reversed_on[g.id])
            for g in self.grants
            if g.operation == operation and g.id in self.suspended and g.id in self.reversed_on
        ]

    def of(self, operation: str) -> list[Grant]:
        """The grants of `operation` that are live now (a suspended one is not)."""
        if self.now is None:
            return []
        return [
            g
            for g in self.grants
            if g.operation == operation
            and g.id not in self.suspended
            and state_of(g, self.uses.get(g.id, 0), self.now) == "live"
        ]

    def suspension(
        self, operation: str, where: Mapping[str, str], evidence: str | None = None
    ) -> str | None:
        """Why a grant of `operation` over `where` is not suggested again: a person reversed a
        write made under a suspended grant that covered as much (None: none did). A grant that
        asks for evidence covers less than one that did not: only such a one's reversal counts."""
        for g in self.grants:
            why = self.suspended.get(g.id)
            wider = g.where.items() <= where.items() and (evidence is None or g.evidence)
            if why is not None and g.operation == operation and wider:
                return (
                    f"{g.id} ({where_label(g.where)}) was suspended: {why}; a person issues it "
                    "again only once they judge the reversal a one-off (custodian grants list)"
                )
        return None
