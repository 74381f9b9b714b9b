"""The CLI's stderr and `custodian run`'s output: JSON lines when asked, a summary on every exit.

With `CUSTODIAN_LOG_FORMAT=json` (read before any other setting) stderr is routed through one
`JsonLog` for the whole command: the CLI's own lines, argparse's usage errors, stray text,
Python warnings and `logging` records. `run --json` prints its summary on stdout however the
run ends: completed, failed, interrupted, a configuration error or a bug.

`custodian --help` loads this module: what only JSON mode, an error or a run needs is imported
where it is used (bench/startup.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from datetime import datetime
    from pathlib import Path
    from types import FrameType

    from custodian_runtime.process.log_lines import LineStream
    from custodian_runtime.run import QuickResult, RunResult
    from custodian_runtime.settings import Settings


@contextlib.contextmanager
def stderr_routed() -> Iterator[None]:
    """In JSON mode, every line written to stderr while the block runs becomes a JSON record."""
    from custodian_runtime.settings.dotenv import early_log_format

    # Without a .env here the environment alone says, and pathlib is not needed (`--help`).
    cwd = _cwd() if os.path.isfile(".env") else None
    if early_log_format(os.environ, cwd) != "json":
        yield
        return
    from custodian_runtime.clock import utc_now
    from custodian_runtime.process.log_lines import JsonLog, LineStream, python_logs_to

    log = JsonLog(sys.stderr, utc_now)
    stream = LineStream(log)
    with python_logs_to(log), contextlib.redirect_stderr(cast(TextIO, stream)):
        try:
            yield
        finally:
            stream.close()


def _cwd() -> Path | None:
    from pathlib import Path

    try:
        return Path.cwd()
    except OSError:  # a removed working directory: the environment alone says
        return None


def say(severity: str, text: str, **fields: Any) -> None:
    """One line of the CLI's own on stderr: `custodian: TEXT`, or a JSON record with `fields`."""
    stream = routed()
    if stream is not None:
        stream.log.emit(severity, {"message": text, **fields})
        return
    from custodian_runtime.process.log_lines import fit_text

    sys.stderr.write(fit_text(f"custodian: {text}") + "\n")


def routed() -> LineStream | None:
    """Stderr as `stderr_routed` made it in JSON mode; None in text mode."""
    # Only stderr_routed makes a LineStream: without log_lines loaded, stderr is not one.
    lines = sys.modules.get("custodian_runtime.process.log_lines")
    stream = sys.stderr
    return stream if lines is not None and isinstance(stream, lines.LineStream) else None


def error_stream() -> TextIO:
    """Stderr for an error's free text: at severity ERROR in JSON mode."""
    stream = routed()
    if stream is None:
        return sys.stderr
    from custodian_runtime.process.log_lines import LineStream

    return cast(TextIO, LineStream(stream.log, "ERROR"))


def stdout_reader_gone() -> bool:
    """True when stdout is a pipe whose reader has closed it (`custodian … | head -1`).

    Then stdout is pointed at /dev/null, so what is still buffered goes nowhere and the
    interpreter's last flush raises nothing. A broken pipe anywhere else (a child process, a
    socket) is not this, and stays a bug."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):  # no real file behind stdout
        return False
    if not any(event & select.POLLERR for _, event in events):
        return False
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)
    return True


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; in JSON mode a usage error is one ERROR record (exit 2)."""
    json_mode = routed() is not None
    caught: IO[str] = io.StringIO() if json_mode else sys.stderr
    try:
        with contextlib.redirect_stderr(caught):
            return parser.parse_args(argv)
    except SystemExit as exc:
        if isinstance(caught, io.StringIO) and caught.getvalue():
            say("ERROR", caught.getvalue().strip(), phase="usage", exit_code=exc.code)
        given = list(sys.argv[1:] if argv is None else argv)
        if exc.code == 2 and given[:1] == ["run"] and "--json" in given:
            _print_summary(_no_run("failed", 2, "usage error: see the line on stderr"), None)
        _flush_help()
        raise


def _flush_help() -> None:
    """Flush what argparse printed (`--help | head -1`): a closed pipe is exit 0, quietly."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        if not stdout_reader_gone():
            raise
        raise SystemExit(0) from None


def cmd_run(
    args: argparse.Namespace,
    load: Callable[[], Settings],
    after: Callable[[Settings], None] | None = None,
) -> int:
    """`custodian run`: the run, its summary (always, with --json) and its final line.

    `after` is called once the run has released the domain (decisions recorded meanwhile)."""
    import time

    from custodian_runtime.clock import utc_now
    from custodian_runtime.core.redact import redact
    from custodian_runtime.errors import ConfigError, Interrupted
    from custodian_runtime.run import quick_skip

    started, clock = utc_now(), time.monotonic()
    timing = (started, clock)
    try:
        with _signals_raise():
            settings = load()
            result: RunResult | QuickResult | None = quick_skip(settings)
            if result is None:  # not a skip on the hub's 304: the whole run decides
                from custodian_runtime.run import run

                result = run(settings)
            if after is not None:
                after(settings)
    except ConfigError as exc:
        if args.json:
            message = f"configuration error: {redact(exc.message)}"
            _print_summary(_no_run("failed", exc.exit_code, message, exc.setting), timing)
        raise
    except (KeyboardInterrupt, Interrupted) as exc:
        code = exc.exit_code if isinstance(exc, Interrupted) else 130
        if args.json:
            _print_summary(_no_run("interrupted", code, str(exc) or "stopped by SIGINT"), timing)
        raise
    except Exception as exc:
        if args.json:  # a bug: the CLI says where the traceback is
            message = f"internal error: {type(exc).__name__}"
            _print_summary(_no_run("failed", 1, message), timing)
        raise
    _print_result(settings, result, timing)
    return result.exit_code


def _print_result(
    settings: Settings, result: RunResult | QuickResult, timing: tuple[datetime, float]
) -> None:
    from custodian_runtime.core.redact import redact

    if settings.json_output:
        _print_summary(result.summary(), timing, one_line=settings.log_format == "json")
    else:
        sys.stdout.write(result.human() + "\n")
    if result.exit_code != 0:
        severity = "WARNING" if result.status == "interrupted" else "ERROR"
        message = redact(result.message)
        say(
            severity,
            f"{result.status}: {message}",
            message=message,
            phase="exit",
            outcome=result.status,
            exit_code=result.exit_code,
        )


def _no_run(
    status: str, exit_code: int, message: str, setting: str | None = None
) -> dict[str, Any]:
    """The summary of a run that never began (or ended by a bug): the same keys, empty."""
    from custodian_runtime.run import RunResult

    summary = RunResult(run_id="", domain="", status=status, exit_code=exit_code).summary()
    summary.update(run_id=None, domain=None, hub=None, model_spec=None, message=message)
    if setting is not None:
        summary["setting"] = setting
    return summary


def _print_summary(
    summary: dict[str, Any], timing: tuple[datetime, float] | None, *, one_line: bool | None = None
) -> None:
    """The summary on stdout, with when it started and finished and how long it took."""
    import time

    from custodian_runtime.clock import utc_now
    from custodian_runtime.core.inert import for_terminal_json
    from custodian_runtime.process.log_lines import fit_summary, iso

    started, clock = timing or (utc_now(), time.monotonic())
    finished = utc_now()
    stamped = {
        **summary,
        "started_at": iso(started),
        "finished_at": iso(finished),
        "ts": iso(finished),
        "duration_s": round(time.monotonic() - clock, 3),
    }
    # One line for a cluster's log pipeline; indented for a person at a terminal.
    if one_line is None:
        one_line = routed() is not None
    # A container runtime splits a log line past 16 KiB: the one-line summary stays under it.
    text = fit_summary(stamped) if one_line else for_terminal_json(stamped, indent=2)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Until the run installs its own handlers: SIGTERM raises Interrupted (SIGINT already does)."""
    import signal
    import threading

    from custodian_runtime.process.stopping import interrupted

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise interrupted(signum, "the start of the run")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
