"""Where a watched run's lines go: runs in threads interleave, so each line names its domain."""

from __future__ import annotations

import io
import sys
from typing import TextIO, cast

from custodian_runtime.process.log_lines import LineStream


def run_stream(domain: str) -> TextIO:
    """Where a run's phase lines go: its own JSON log (which names its run and domain), or
    stderr with the domain after `custodian: `, since runs' lines interleave."""
    err = sys.stderr
    if isinstance(err, LineStream):
        return err.log.target
    return cast(TextIO, Tagged(err, domain))


class Tagged(io.TextIOBase):
    """A text stream that names the domain in each `custodian: ` line written to it."""

    def __init__(self, target: TextIO, domain: str) -> None:
        super().__init__()
        self._target, self._tag = target, f"custodian: {domain}: "

    def writable(self) -> bool:
        """Always: it is a stream to write to."""
        return True

    def write(self, text: str) -> int:
        """Write `text`, the domain named after its leading `custodian: `."""
        prefix = "custodian: "
        shown = self._tag + text[len(prefix) :] if text.startswith(prefix) else text
        self._target.write(shown)
        return len(text)

    def flush(self) -> None:
        """Flush the stream underneath."""
        self._target.flush()
