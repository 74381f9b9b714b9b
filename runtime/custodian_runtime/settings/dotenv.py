"""`.env` in the working directory, under the process environment: read by python-dotenv.

Values are taken literally (no `${VAR}` expansion) and a quoted value ends on its own line. A
line that cannot be read is a ConfigError that names its number, never its content.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import TYPE_CHECKING, NoReturn

from custodian_runtime.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from dotenv.parser import Binding

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_dotenv(text: str) -> dict[str, str]:
    """Parse `.env` text: KEY=VALUE lines, `export` allowed, quotes and escapes, `#` comments."""
    # Imported here: with no `.env` (and for `custodian --help`) python-dotenv is not loaded.
    from dotenv import dotenv_values
    from dotenv.parser import parse_stream

    for binding in parse_stream(io.StringIO(text)):
        _check(binding)
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def _check(binding: Binding) -> None:
    """A line python-dotenv could not read, or would read as other than one KEY=VALUE."""
    # python-dotenv's binding starts with the blank lines before it: count from its first text.
    text = binding.original.string
    body = text.lstrip()
    number = binding.original.line + text[: len(text) - len(body)].count("\n")
    if binding.error:
        _refuse(
            number,
            "is not KEY=VALUE that python-dotenv can read: close a quoted value's quote on the "
            "same line, with only a # comment after it",
        )
    if binding.key is None:  # a blank or comment line
        return
    if not _NAME.fullmatch(binding.key) or binding.value is None:
        _refuse(number, "is not KEY=VALUE (a variable name, '=', then the value)")
    if "\n" in body.rstrip("\r\n"):
        _refuse(number, "opens a quote that is not closed on the same line: close it there")


def _refuse(number: int, problem: str) -> NoReturn:
    # The line itself is never shown: it may hold a secret.
    raise ConfigError(f".env line {number} {problem}", setting=".env")


def layered_environment(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The process environment over `.env` (if present in `cwd`)."""
    dotenv_path = cwd / ".env"
    layered: dict[str, str] = {}
    if dotenv_path.is_file():
        layered.update(read_dotenv(_dotenv_text(dotenv_path)))
    layered.update({k: v for k, v in environ.items() if v != ""})
    return layered


def early_log_format(environ: Mapping[str, str], cwd: Path | None) -> str:
    """CUSTODIAN_LOG_FORMAT read first, so that even a broken setting is logged as asked."""
    env: Mapping[str, str] = environ
    if cwd is not None:
        # A broken .env: the process environment still says.
        with contextlib.suppress(ConfigError, OSError):
            env = layered_environment(environ, cwd)
    return "json" if env.get("CUSTODIAN_LOG_FORMAT", "").strip().lower() == "json" else "text"


def _dotenv_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text: save it as UTF-8", setting=".env") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path} ({exc.strerror or exc}): fix its permissions or remove it",
            setting=".env",
        ) from None
