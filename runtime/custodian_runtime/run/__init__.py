"""One run of Custodian: observe -> orient -> decide -> act -> record.

`run(settings)` is the whole pass; it returns a frozen `RunResult`. The step modules
(`observe`, `orient`, `decide`, `act`, `record`) each take the run's `RunContext` and what the
earlier steps returned, and return a value. The write chain the run shares with the approvals
(`send`, dispatch, origin, preflight, the summary read) is a floor below, in `writes/`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.run._context import RunContext
    from custodian_runtime.run._planner import Planner, RulePlanner, build_planner
    from custodian_runtime.run._quick import quick_skip
    from custodian_runtime.run._quick_result import QuickResult
    from custodian_runtime.run._result import RunResult, RunSoFar
    from custodian_runtime.run._runner import run
    from custodian_runtime.run._unchanged import work_waiting
    from custodian_runtime.run.observe import Observation

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
