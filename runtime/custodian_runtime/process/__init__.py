"""The process's life: the stop flag, stderr lines (text or JSON), phase lines, a crash's line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.process.crash import report_crash
    from custodian_runtime.process.log_lines import (
        ENTRY_TEXT,
        MAX_LINE_BYTES,
        MIN_FIELD,
        PLACE,
        TRIES,
        JsonLog,
        LineStream,
        fit_record,
        fit_summary,
        fit_text,
        iso,
        python_logs_to,
    )
    from custodian_runtime.process.phase_log import (
        WARNING_OUTCOMES,
        PhaseLog,
        json_log_of,
        retry_reporter,
        severity_of,
    )
    from custodian_runtime.process.stopping import (
        POLL_S,
        OnRetry,
        StopFlag,
        interrupted,
        stop_on_signals,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
