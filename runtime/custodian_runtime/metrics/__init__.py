"""Metrics: a run's figures pushed to a Prometheus Pushgateway, and `custodian status`.

Which figures, and their names, are the core's (core/metrics.py); here they are read from
memory/, turned into a fresh prometheus-client registry, pushed or printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.metrics._registry import exposition
    from custodian_runtime.metrics.push import PUSH_DEADLINE_S, push_figures, push_run
    from custodian_runtime.metrics.serving import MetricsServer
    from custodian_runtime.metrics.status import (
        DEFAULT_MAX_AGE,
        EXIT_OVERDUE,
        StatusRequest,
        all_figures,
        domain_figures,
        parse_max_age,
        status_command,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
