"""The commands a suggestion prints: each runs as printed, one a line, starting with `custodian`.

Each names the domain, the memory directory and, for a grant, the hub, so that a person can run
it from anywhere; its reason says why it was suggested.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

GRANT_MAX, GRANT_EXPIRES = 10, "7d"  # what a suggested grant asks for


@dataclass(frozen=True)
class Asking:
    """Where the suggested commands run: the domain, its memory, its hub, who decides."""

    domain: str
    memory: str | None = None
    hub: str | None = None  # `embedded` or the hub's URL, as `--hub` takes it
    by: str = ""  # "": no --by, the command decides as CUSTODIAN_DECIDER or the OS user


@dataclass(frozen=True)
class Suggestion:
    """One command a person may run, and why it is suggested."""

    kind: str  # "grant", "renew" or "mode"
    operation: str
    command: str
    why: str
    where: Mapping[str, str] = field(default_factory=dict)
    on: Mapping[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """As `policy report --json` lists it."""
        return {
            "kind": self.kind,
            "operation": self.operation,
            "command": self.command,
            "why": self.why,
            "where": dict(self.where),
        }


def _argv_text(argv: Sequence[str], reason: str) -> str:
    """The words quoted for a POSIX shell, the reason last as one `--reason=...` word."""
    return " ".join([*(shlex.quote(word) for word in argv), f"--reason={shlex.quote(reason)}"])


def _tail(asking: Asking, hub: bool) -> list[str]:
    words = ["--hub", asking.hub] if hub and asking.hub else []
    words += ["--memory", asking.memory] if asking.memory else []
    return [*words, "--by", asking.by] if asking.by else words


def mode_command(asking: Asking, operation: str, mode: str, why: str) -> Suggestion:
    """`policy set` of `operation` to `mode`, with why in its reason."""
    argv = ["custodian", "policy", "set", "--domain", asking.domain, "--operation", operation]
    argv += ["--mode", mode, *_tail(asking, hub=False)]
    return Suggestion("mode", operation, _argv_text(argv, f"policy report: {why}"), why)


def grant_command(
    asking: Asking,
    operation: str,
    where: Mapping[str, str],
    why: str,
    kind: str = "grant",
    bounds: tuple[int, str] = (GRANT_MAX, GRANT_EXPIRES),
    evidence: str | None = None,
    on: Mapping[str, str] | None = None,
) -> Suggestion:
    """`grants issue` of `operation` narrowed to `where` (and to a move citing a person's
    newer word, with `evidence`; to facts of its target, with `on`), with why in its reason."""
    argv = ["custodian", "grants", "issue", "--domain", asking.domain, "--operation", operation]
    for key, value in sorted(where.items()):
        argv += ["--where", f"{key}={value}"]
    for key, value in sorted((on or {}).items()):
        argv += ["--on", f"{key}={value}"]
    argv += ["--max", str(bounds[0]), "--expires", bounds[1]]
    argv += [] if evidence is None else ["--evidence", evidence]
    argv += _tail(asking, hub=True)
    said = _argv_text(argv, f"policy report: {why}")
    return Suggestion(kind, operation, said, why, dict(where), dict(on or {}))


def where_label(where: Mapping[str, str]) -> str:
    """A grant's `where` in words: `status=blocked`, or `any params`."""
    return " ".join(f"{k}={v}" for k, v in sorted(where.items())) or "any params"
