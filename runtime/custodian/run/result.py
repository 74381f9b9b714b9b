"""What a run tells the people and machines watching it: phase lines on stderr, a summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from custodian.core.authority import Ruling
from custodian.core.display import WIDTH, fit, item_line
from custodian.core.inert import for_terminal
from custodian.core.outcomes import (
    RUN_KINDS,
    ItemOutcome,
    OutcomeKind,
    counts,
    of_kind,
)


def _entry(o: ItemOutcome) -> dict[str, Any]:
    """One plan item as `--json` shows it; empty fields are left out."""
    entry = {k: v for k, v in o.__dict__.items() if v is not None}
    entry["outcome"] = entry.pop("kind")
    return entry


@dataclass
class RunResult:
    """The outcome of one run, as `--json` prints it and the CLI turns into an exit code.

    `outcomes` holds one value per plan item, set once when the run has acted (or, in a dry run,
    decided); every list and count below is rendered from it.
    """

    run_id: str
    domain: str
    status: str = "started"
    exit_code: int = 0
    message: str = ""
    hub: str = ""
    model_spec: str = ""
    model: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    outcomes: tuple[ItemOutcome, ...] = ()
    note_path: str | None = None
    dry_run: bool = False
    observations: list[str] = field(default_factory=list)
    # One report per write a killed run left open: found, resent, refused or expired.
    reconciled: list[dict[str, Any]] = field(default_factory=list)
    # The authority's rulings, with each item's params (for `custodian eval`); not printed.
    rulings: tuple[Ruling, ...] = field(default=(), repr=False)
    omitted: dict[str, int] = field(default_factory=dict)  # per prompt section, left out for space
    # For the terminal summary, built once per run: id -> title (from the observed domain), and
    # plan item index -> what the item says.
    titles: dict[str, str] = field(default_factory=dict)
    contents: dict[int, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """How many plan items got each outcome."""
        return counts(self.outcomes, dry_run=self.dry_run)

    def summary(self) -> dict[str, Any]:
        """The JSON summary printed by `--json`."""
        kinds: tuple[OutcomeKind, ...] = (*RUN_KINDS, "would_execute", "would_queue")
        return {
            "run_id": self.run_id,
            "domain": self.domain,
            "status": self.status,
            "exit_code": self.exit_code,
            "message": self.message,
            "dry_run": self.dry_run,
            "hub": self.hub,
            "model_spec": self.model_spec,
            "model": self.model,
            "usage": self.usage,
            "counts": self.counts(),
            **{kind: [_entry(o) for o in of_kind(self.outcomes, kind)] for kind in kinds},
            "items": [_entry(o) for o in self.outcomes],
            "observations": self.observations,
            "reconciled": self.reconciled,
            "omitted": self.omitted,
            "note": self.note_path,
        }

    def human(self) -> str:
        """A few lines for a person at a terminal, one per plan item, in plan order.

        Each item's line fits in 100 columns; the full reasons are in `--json` and the journal.
        Model and hub text is shown escaped: it cannot move the cursor or start a new line.
        """
        mode = " [dry run: nothing written]" if self.dry_run else ""
        t = for_terminal
        out = [f"run {self.run_id} ({self.domain}){mode}: {self.status}: {t(self.message)}"]
        out += [fit(f"  observed  {t(o)}", WIDTH) for o in self.observations]
        for o in self.outcomes:
            title = self.titles.get(o.target or "")
            said = self.contents.get(o.index)
            out.append(item_line(o, title=title, said=said, dry_run=self.dry_run))
        for r in self.reconciled:
            line = (
                f"  reconciled    {t(r['operation'])} #{t(str(r['index']))} of run "
                f"{t(r['run'])}: {r['outcome']}" + (f" {t(r['reason'])}" if r.get("reason") else "")
            )
            out.append(fit(line, WIDTH))
        if self.note_path:
            out.append(f"note: {self.note_path}")
        # Each entry is one line on the terminal, whatever model or hub text it holds.
        return "\n".join(for_terminal(line) for line in out)
