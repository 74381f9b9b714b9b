"""What a run was told of the canon, read back: each piece cited, and what changed since."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from custodian_runtime.core.canon.sections import CanonFile, split
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.journal.kinds import CanonCited

__all__ = ["changed_since", "citation", "summary"]


def citation(cited: CanonCited) -> str:
    """One piece as a person reads it: `file (whole)` or `file § heading`, and its digest."""
    where = f"{cited.file} (whole)" if cited.whole else f"{cited.file} § {cited.heading}"
    return f"{where} sha256={cited.sha256[:12]}"


def summary(cited: Sequence[CanonCited], sections: int | None) -> str:
    """'3 file(s) whole, 5 of 600 section(s) retrieved' — how much of the canon was shown."""
    whole = sum(1 for c in cited if c.whole)
    text = f"{whole} file(s) whole"
    if sections:
        text += f", {len(cited) - whole} of {sections} section(s) retrieved"
    return text


def changed_since(
    cited: Sequence[CanonCited], files: Mapping[str, CanonFile]
) -> tuple[CanonCited, ...]:
    """The pieces whose text the canon of `files` no longer holds as it was shown."""
    changed = []
    for piece in cited:
        file = files.get(piece.file)
        if file is None:
            changed.append(piece)
        elif piece.whole:
            if sha256_hex(file.text) != piece.sha256:
                changed.append(piece)
        elif all(s.sha256 != piece.sha256 for s in split(file)):
            changed.append(piece)
    return tuple(changed)
