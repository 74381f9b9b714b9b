"""JSON lines on stderr: the 16 KiB cap, one record per line of text, severities of phase lines."""

from __future__ import annotations

import io
import json
import logging
import warnings
from datetime import UTC, datetime

from custodian_runtime.process.log_lines import (
    MAX_LINE_BYTES,
    JsonLog,
    LineStream,
    fit_record,
    fit_text,
    python_logs_to,
)
from custodian_runtime.process.phase_log import PhaseLog, severity_of

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _log() -> tuple[JsonLog, io.StringIO]:
    out = io.StringIO()
    return JsonLog(out, lambda: NOW), out


def test_a_huge_field_is_cut_with_a_marker_and_the_rest_kept() -> None:
    record = {
        "severity": "ERROR",
        "ts": "t",
        "run_id": "r1",
        "domain": "website",
        "message": "é" * 50_000,
        "detail": {"items": ["x" * 20_000]},
        "code": 4,
    }
    line = fit_record(record)
    assert len(line.encode("utf-8")) <= MAX_LINE_BYTES
    back = json.loads(line)
    assert back["code"] == 4 and back["run_id"] == "r1" and back["domain"] == "website"
    assert "…[truncated " in back["message"] and back["message"].startswith("éé")


def test_thousands_of_small_fields_keep_where_the_line_belongs() -> None:
    record = {"severity": "INFO", "ts": "t", "run_id": None, "domain": None}
    record.update({f"k{i}": i for i in range(5000)})
    back = json.loads(fit_record(record))
    assert back == {
        "severity": "INFO",
        "ts": "t",
        "run_id": None,
        "domain": None,
        "truncated": True,
    }


def test_a_text_line_is_cut_and_made_inert() -> None:
    line = fit_text("\x1b[2J" + "a" * 20_000)
    assert len(line.encode()) <= MAX_LINE_BYTES and line.startswith("\\x1b[2J")
    assert "…[truncated " in line


def test_each_line_of_text_becomes_one_record_of_the_bound_run() -> None:
    log, out = _log()
    log.bind("r1", "website")
    stream = LineStream(log, "ERROR")
    stream.write("first\nsec")
    stream.write("ond\nunfinished")
    stream.close()
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [x["message"] for x in lines] == ["first", "second", "unfinished"]
    assert all(x["severity"] == "ERROR" and x["run_id"] == "r1" for x in lines)
    assert lines[0]["ts"] == "2026-12-01T12:00:00Z"


def test_warnings_and_logging_go_to_the_log_only_while_routed() -> None:
    log, out = _log()
    with python_logs_to(log), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("careful", UserWarning, stacklevel=1)
        logging.getLogger("lib").warning("a %s record", "library")
    logging.getLogger("lib").warning("after: not routed")
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [(x["severity"], x["message"]) for x in lines] == [
        ("WARNING", "careful"),
        ("WARNING", "a library record"),
    ]
    assert lines[0]["category"] == "UserWarning" and lines[1]["logger"] == "lib"


def test_a_phase_log_binds_the_cli_log_and_gives_severities() -> None:
    log, out = _log()
    phases = PhaseLog(
        LineStream(log),
        fmt="json",
        run_id="r9",
        domain="website",
        clock=lambda: NOW,
        monotonic=lambda: 0.0,
    )
    assert (log.run_id, log.domain) == ("r9", "website")
    phases.retry("hub", 1, 5, "HTTP 503", 1.25)
    phases.line("finish", "failed", exit_code=3)
    retry, finish = (json.loads(x) for x in out.getvalue().splitlines())
    assert retry["severity"] == "WARNING" and retry["outcome"] == "retry"
    assert (retry["attempt"], retry["max_attempts"], retry["wait_s"], retry["cause"]) == (
        1,
        5,
        1.25,
        "HTTP 503",
    )
    assert finish["severity"] == "ERROR"


def test_severity_of_phase_lines() -> None:
    assert severity_of("observe", "ok") == "INFO"
    assert severity_of("finish", "completed", 0) == "INFO"
    assert severity_of("finish", "interrupted", 143) == "WARNING"
    assert severity_of("finish", "partial", 5) == "ERROR"
    assert severity_of("journal", "torn_tail") == "WARNING"
    assert severity_of("decide", "failed") == "ERROR"
