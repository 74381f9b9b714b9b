"""An unexpected exception (a bug): exit 1, one line on stderr, the traceback in a file.

The traceback goes to `<memory>/crashes/<UTC time>-<pid>.txt` when the memory directory is a
writable directory (it outlives a pod), else to a file in the system's temporary directory.
With CUSTODIAN_DEBUG=1 it is also printed to stderr.
"""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from custodian_runtime.clock import utc_now
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.redact import redact


def report_crash(
    exc: BaseException, memory_dir: Path | None, environ: Mapping[str, str], stderr: TextIO
) -> int:
    """Keep the traceback where a person can find it, say where in one line; return 1."""
    from custodian_runtime.core.run_rules import EXIT_INTERNAL  # off the startup path

    details = redact("".join(traceback.format_exception(exc)))
    where = _save(details, memory_dir)
    if environ.get("CUSTODIAN_DEBUG") == "1":
        stderr.write(details)
    summary = redact(f"{type(exc).__name__}: {exc}")[:300].replace("\n", " ")
    place = f"the traceback is in {where}" if where else "set CUSTODIAN_DEBUG=1 to see it"
    line = f"custodian: internal error ({summary}); {place}. This is a bug: report it"
    stderr.write(for_terminal(line) + "\n")
    return EXIT_INTERNAL


def _save(details: str, memory_dir: Path | None) -> str | None:
    name = f"{utc_now().strftime('%Y%m%dT%H%M%SZ')}-{os.getpid()}.txt"
    targets = []
    if memory_dir is not None and memory_dir.is_dir() and os.access(memory_dir, os.W_OK):
        targets.append(memory_dir / "crashes" / name)
    targets.append(Path(tempfile.gettempdir()) / f"custodian-crash-{name}")
    for path in targets:
        try:
            path.parent.mkdir(exist_ok=True)
            path.write_text(details, encoding="utf-8")
        except OSError:
            continue
        return str(path)
    return None
