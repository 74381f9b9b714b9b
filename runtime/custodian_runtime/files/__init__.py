"""Files on disk, written atomically: what every concept's disk half writes through.

The journal (with its snapshots and the run lock, and in `journal/person/` the approval queue,
a person's words and standing) and the session notes each keep their disk half in a package of
their own (`journal/`, `notes/`); all of them write through `atomic.py` here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.files.atomic import (
        atomic_write_bytes,
        atomic_write_text,
        create_whole,
        fsync_directory,
        replace_lines,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
