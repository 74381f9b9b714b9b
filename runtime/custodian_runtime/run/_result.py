"""What a run learned, and its result: the summary `--json` prints and the terminal lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.fold.late_landings import FOUND_LATE, SAME_VALUE
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import CanonCited
from custodian_runtime.core.outcomes import (
    RUN_KINDS,
    ItemOutcome,
    OutcomeKind,
    counts,
    of_kind,
)
from custodian_runtime.core.presentation.display import WIDTH, fit, item_line
from custodian_runtime.core.presentation.note_outcomes import Earlier


def _entry(o: ItemOutcome) -> dict[str, Any]:
    """One plan item as `--json` shows it; empty fields are left out."""
    entry = {k: v for k, v in o.__dict__.items() if v is not None}
    entry["outcome"] = entry.pop("kind")
    return entry


@dataclass(frozen=True)
class RunSoFar:
    """What a run has learned so far, as values; each step's value is added as it returns.

    Nothing changes a `RunSoFar`: the runner replaces it with a new one (`dataclasses.replace`),
    and a run that ends (completed, skipped or failed at any point) turns it into its
    `RunResult` once, with `ended`.
    """

    run_id: str
    domain: str
    dry_run: bool = False
    model_spec: str = ""
    hub: str = ""
    model: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)
    outcomes: tuple[ItemOutcome, ...] = ()
    observations: Sequence[str] = ()
    # One report per write a killed run left open: found, resent, refused or expired.
    reconciled: Sequence[Mapping[str, Any]] = ()
    # The authority's rulings, with each item's params (for `custodian eval`); not printed.
    rulings: tuple[Ruling, ...] = field(default=(), repr=False)
    omitted: Mapping[str, int] = field(default_factory=dict)  # per prompt section, left out
    # What of the canon the prompt showed, when the canon had sections to retrieve (else empty:
    # the journal's prompt record still cites the files shown whole), and how many it had.
    canon: tuple[CanonCited, ...] = ()
    canon_sections: int = 0
    # For the terminal summary, built once per run: id -> title (from the observed domain), and
    # plan item index -> what the item says.
    titles: Mapping[str, str] = field(default_factory=dict)
    # For the note: the domain as observed (a status change's from-status, cited events' text).
    seen: DomainSummary | None = field(default=None, repr=False)
    contents: Mapping[int, str] = field(default_factory=dict)
    # The model's raw answer, for the note of a run whose answer held no usable plan.
    answer: str | None = field(default=None, repr=False)
    # What a failing model process said last on its stderr (inert, secrets redacted).
    model_stderr: str | None = None
    # Each operation's mode, as a person set it or by default (core/standing/modes.py).
    modes: Mapping[str, str] = field(default_factory=dict)
    # Shadow items of earlier runs a person did the same way on the hub (core/standing/shadow.py).
    shadow_matched: Sequence[Mapping[str, Any]] = ()
    # What a person's reversal took away at this run (core/standing/narrowed.py).
    narrowed: Sequence[str] = ()
    # What became of the items the last note left waiting (core/presentation/note_outcomes.py).
    earlier: Sequence[Earlier] = ()

    def counts(self) -> dict[str, int]:
        """How many plan items got each outcome."""
        return counts(self.outcomes, dry_run=self.dry_run)

    def ended(
        self, status: str, exit_code: int, message: str, note_path: str | None = None
    ) -> RunResult:
        """The run's result: what was known when it ended, and how it ended."""
        known = {f.name: getattr(self, f.name) for f in fields(RunSoFar)}
        return RunResult(
            **known, status=status, exit_code=exit_code, message=message, note_path=note_path
        )


@dataclass(frozen=True)
class RunResult(RunSoFar):
    """The outcome of one run, as `--json` prints it and the CLI turns into an exit code.

    `outcomes` holds one value per plan item (set when the run has acted or, in a dry run,
    decided); every list and count below is rendered from it.
    """

    status: str = "started"
    exit_code: int = 0
    message: str = ""
    note_path: str | None = None

    def summary(self) -> dict[str, Any]:
        """The JSON summary printed by `--json`."""
        kinds: tuple[OutcomeKind, ...] = (*RUN_KINDS, "unknown", "would_execute", "would_queue")
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
            "usage": dict(self.usage),
            "counts": self.counts(),
            "modes": dict(self.modes),
            **{kind: [_entry(o) for o in of_kind(self.outcomes, kind)] for kind in kinds},
            "items": [_entry(o) for o in self.outcomes],
            "observations": list(self.observations),
            "reconciled": [dict(r) for r in self.reconciled],
            # Closed writes the hub shows landed anyway: each is for a person to check.
            "late_landings": [dict(r) for r in self.reconciled if r["outcome"] == FOUND_LATE],
            # Closed writes whose value the hub shows, set by someone else: not landed.
            "same_value": [dict(r) for r in self.reconciled if r["outcome"] == SAME_VALUE],
            "shadow_matched": [dict(r) for r in self.shadow_matched],
            "omitted": dict(self.omitted),
            "note": self.note_path,
            "model_stderr": self.model_stderr,
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
