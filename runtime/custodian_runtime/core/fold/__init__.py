"""The journal folded: each a pure function of the records, a view rebuilt from them.

Each is a pure function of the journal's records (core/journal/), kept as a view that can be
rebuilt from them, never as a second truth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.fold import (
        api,
        checkpoint,
        late_landings,
        prune,
        render,
        run_index,
        runs,
        settle,
        stream,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
