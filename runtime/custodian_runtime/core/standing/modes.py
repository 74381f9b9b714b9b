"""Modes per operation, set by a person: `auto`, `ask`, `shadow` or `off`; narrowing only.

`auto` is the default of the three sanctioned writes and allowed only for them; every other
operation defaults to `ask` and runs without a card only under a grant (core/standing/grants.py). A
mode never widens what the authority allows: it only queues, shadows or denies what it ruled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Literal, get_args

import custodian_runtime.core.operations as operations

Mode = Literal["auto", "ask", "shadow", "off"]
# The modes under which no write of the operation goes out, a person's approval included.
SILENT: frozenset[str] = frozenset({"shadow", "off"})
MODES: tuple[str, ...] = get_args(Mode)


def known_operations() -> tuple[str, ...]:
    """Every registered operation, sorted: what a mode can be set on."""
    return tuple(sorted(operations.names()))


def default_mode(operation: str) -> Mode:
    """`auto` for the sanctioned writes, `ask` for every other operation."""
    return "auto" if operation in operations.names("sanctioned") else "ask"


def mode_problem(operation: str, mode: str) -> str | None:
    """Why a person may not set `mode` on `operation` (None: they may)."""
    known = known_operations()
    if operation not in known:
        return f"unknown operation {operation!r}; known operations: {', '.join(known)}"
    if mode not in MODES:
        return f"unknown mode {mode!r}; give one of {', '.join(MODES)}"
    if mode == "auto" and default_mode(operation) != "auto":
        return (
            f"{operation} needs a person's approval, so it cannot be set to auto (modes only "
            "narrow); set ask, shadow or off, or issue a bounded grant: custodian grants issue"
        )
    return None


def person_problem(by: str, reason: str) -> str | None:
    """Why a person's decision cannot be recorded as given: who and why must be said (None: ok)."""
    if not by.strip() or len(by) > 200:
        return "--by: name the person who decides, in 1 to 200 characters (e.g. --by ana)"
    if not reason.strip() or len(reason) > 2000:
        return "--reason: say why, in 1 to 2000 characters; it is kept in the journal"
    return None


@dataclass(frozen=True)
class ModeSetting:
    """One person's setting of one operation's mode, and why."""

    operation: str
    mode: Mode
    by: str
    reason: str
    at: datetime


@dataclass(frozen=True)
class Modes:
    """A domain's modes: what a person set, the defaults for the rest."""

    settings: Mapping[str, ModeSetting] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, operation: str) -> Mode:
        """The mode `operation` runs in."""
        setting = self.settings.get(operation)
        return default_mode(operation) if setting is None else setting.mode

    def with_setting(self, setting: ModeSetting) -> Modes:
        """These modes with `setting` applied (the later setting of an operation wins)."""
        return Modes(MappingProxyType({**self.settings, setting.operation: setting}))

    def as_record(self) -> dict[str, str]:
        """Every operation's mode, for `--json` and the note's front matter."""
        return {op: self.of(op) for op in known_operations()}

    def changed(self) -> dict[str, str]:
        """The operations a person set to other than their default."""
        return {op: s.mode for op, s in sorted(self.settings.items()) if s.mode != default_mode(op)}
