"""`custodian eval`: scenarios run as dry runs against a fresh seeded hub, scored and compared.

Each scenario (evals/scenarios/*.json) seeds a reference hub, runs `run()` with a fixed clock and
`dry_run=True`, and checks the core's expectations against what the model proposed and what the
authority ruled; the report sums them and compares the score with a committed baseline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.evals.command import eval_command

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
