"""A run's metrics, pushed at its end when a Pushgateway is configured (metrics/push.py)."""

from __future__ import annotations

from datetime import datetime

from custodian_runtime.process.phase_log import PhaseLog
from custodian_runtime.run._context import Clock
from custodian_runtime.run._result import RunResult
from custodian_runtime.settings import Settings


def push_after(
    settings: Settings, result: RunResult, began: datetime, clock: Clock, log: PhaseLog
) -> bool:
    """Push the run's figures; a dry run pushes nothing, and a failed push is one warning."""
    if settings.pushgateway_url is None or settings.dry_run:
        return False
    # Imported here: a run without a Pushgateway (or a skip) loads no metrics client.
    from custodian_runtime.core.metrics import RunFacts
    from custodian_runtime.metrics import push_run

    ended = clock()
    facts = RunFacts(
        began, ended, result.exit_code, result.status, result.counts(), result.model, result.usage
    )
    where = (settings.memory_dir, result.domain, settings.seal_key)
    return push_run(settings.pushgateway_url, facts, where, ended, log)
