"""The mark Custodian puts on the text of every write it makes, and how to read it back."""

from __future__ import annotations

import re

_MARK = re.compile(r" \[custodian run [A-Za-z0-9._:-]+\]$")


def with_run_mark(text: str, run_id: str, limit: int = 2000) -> str:
    """`text [custodian run <id>]`, cut so the whole fits in `limit` characters."""
    suffix = f" [custodian run {run_id}]"
    return text[: limit - len(suffix)] + suffix


def without_run_mark(text: str) -> str:
    """The text as the model wrote it (possibly cut), without the run mark."""
    return _MARK.sub("", text)


def same_text(marked: str, proposed: str) -> bool:
    """Whether a marked text on the hub records what `proposed` says (allowing for the cut)."""
    original = without_run_mark(marked)
    if original == proposed:
        return True
    # A long text was cut to make room for the mark: compare what survived.
    return marked != original and len(marked) >= 1990 and proposed.startswith(original)
