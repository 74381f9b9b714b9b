"""The command line: argparse, settings, a typed request, the command; errors to exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.cli._main import main

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
