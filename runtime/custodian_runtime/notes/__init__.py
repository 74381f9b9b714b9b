"""Session notes on disk: the run's prose under memory/working/, written atomically."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.notes.store import (
        last_note_prose,
        note_path,
        note_prose,
        note_text,
        write_note,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
