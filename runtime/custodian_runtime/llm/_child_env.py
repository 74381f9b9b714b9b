"""The environment of a model child process (`cmd:`, `claude-code`): only what it needs.

A child gets `PATH`, a private `HOME` and `TMPDIR` (made for the call and removed after it), the
locale (`LANG`, `LANGUAGE`, `LC_*`) and the variables a person named in `CUSTODIAN_CMD_ENV`. It
never gets the hub token, the seal key, the runtime's own settings or a provider key: naming one
of those in `CUSTODIAN_CMD_ENV` is a configuration error, not a silent drop.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.errors import ConfigError

EXTRA_VAR = "CUSTODIAN_CMD_ENV"
# Keys of every provider the runtime knows, and the CLI's own login token.
PROVIDER_KEYS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "OPENROUTER_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OLLAMA_API_KEY",
        "OPENAI_COMPATIBLE_API_KEY",
    }
)
# The runtime's own configuration: the hub token, the seal key and every other setting.
RUNTIME_PREFIXES = ("STATE_HUB_", "CUSTODIAN_")
LOCALE_NAMES = ("LANG", "LANGUAGE")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# Variables whose values never appear in what a model process said (its stderr, quoted to people).
SECRET_NAMES = PROVIDER_KEYS | {"STATE_HUB_TOKEN", "CUSTODIAN_SEAL_KEY"}


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the known secrets in `env`, to redact from a child's output."""
    return tuple(value for name, value in env.items() if name in SECRET_NAMES and value)


def refused(name: str) -> bool:
    """True for a variable no model child may ever see, whatever `CUSTODIAN_CMD_ENV` says."""
    return name in PROVIDER_KEYS or name.upper().startswith(RUNTIME_PREFIXES)


def extra_names(raw: str | None) -> tuple[str, ...]:
    """The names in `CUSTODIAN_CMD_ENV` (comma-separated), or ConfigError naming a bad one."""
    names = tuple(part.strip() for part in (raw or "").split(",") if part.strip())
    for name in names:
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"{EXTRA_VAR} contains {name!r}, which is not a variable name; "
                "list names only, separated by commas (e.g. CUSTODIAN_CMD_ENV=HTTPS_PROXY,MY_VAR)",
                setting=EXTRA_VAR,
            )
        if refused(name):
            raise ConfigError(
                f"{EXTRA_VAR} names {name}, which a model process must never see (the hub token, "
                "provider keys and CUSTODIAN_*/STATE_HUB_* settings stay with the runtime): "
                f"remove {name} from {EXTRA_VAR}",
                setting=EXTRA_VAR,
            )
    return names


@dataclass(frozen=True)
class Private:
    """A call's private directories: HOME, TMPDIR and an empty working directory."""

    home: Path
    tmp: Path
    work: Path


@contextmanager
def private_dirs(prefix: str) -> Iterator[Private]:
    """Fresh HOME, TMPDIR and working directories for one call, removed when it ends."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        dirs = Private(Path(scratch, "home"), Path(scratch, "tmp"), Path(scratch, "work"))
        for path in (dirs.home, dirs.tmp, dirs.work):
            path.mkdir(mode=0o700)
        yield dirs


def minimal_env(
    source: Mapping[str, str], home: Path | str, tmp: Path | str, extra: tuple[str, ...] = ()
) -> dict[str, str]:
    """PATH, HOME, TMPDIR, the locale and the named extras present in `source`; nothing else."""
    child = {"PATH": source.get("PATH") or os.defpath, "HOME": str(home), "TMPDIR": str(tmp)}
    for name, value in source.items():
        if name in LOCALE_NAMES or name.startswith("LC_"):
            child[name] = value
    # Checked again here so that no path around settings can hand a secret to a child.
    child.update({name: source[name] for name in extra if name in source and not refused(name)})
    return child
