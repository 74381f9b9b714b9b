"""`.env` in the working directory, under the process environment: parsed, errors told by line."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from custodian_runtime.errors import ConfigError


def read_dotenv(text: str) -> dict[str, str]:
    """Parse `.env` text: KEY=VALUE lines, `export` allowed, quotes stripped, `#` comments."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            # The line itself is not shown: it may hold a secret.
            raise ConfigError(
                f".env line {number} is not KEY=VALUE (a variable name, '=', then the value)",
                setting=".env",
            )
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values


def layered_environment(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The process environment over `.env` (if present in `cwd`)."""
    dotenv_path = cwd / ".env"
    layered: dict[str, str] = {}
    if dotenv_path.is_file():
        layered.update(read_dotenv(_dotenv_text(dotenv_path)))
    layered.update({k: v for k, v in environ.items() if v != ""})
    return layered


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
