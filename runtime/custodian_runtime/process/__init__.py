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

__all__ = [
    "ENTRY_TEXT",
    "MAX_LINE_BYTES",
    "MIN_FIELD",
    "PLACE",
    "POLL_S",
    "TRIES",
    "WARNING_OUTCOMES",
    "JsonLog",
    "LineStream",
    "OnRetry",
    "PhaseLog",
    "StopFlag",
    "fit_record",
    "fit_summary",
    "fit_text",
    "interrupted",
    "iso",
    "json_log_of",
    "python_logs_to",
    "report_crash",
    "retry_reporter",
    "severity_of",
    "stop_on_signals",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(("report_crash",), "crash"),
            **dict.fromkeys(
                (
                    "ENTRY_TEXT",
                    "JsonLog",
                    "LineStream",
                    "MAX_LINE_BYTES",
                    "MIN_FIELD",
                    "PLACE",
                    "TRIES",
                    "fit_record",
                    "fit_summary",
                    "fit_text",
                    "iso",
                    "python_logs_to",
                ),
                "log_lines",
            ),
            **dict.fromkeys(
                ("PhaseLog", "WARNING_OUTCOMES", "json_log_of", "retry_reporter", "severity_of"),
                "phase_log",
            ),
            **dict.fromkeys(
                ("OnRetry", "POLL_S", "StopFlag", "interrupted", "stop_on_signals"), "stopping"
            ),
        },
    )
