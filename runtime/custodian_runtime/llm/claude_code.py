"""The Claude Code CLI as a pure single completion: no tools, no settings, no session, empty cwd.

`claude -p --output-format json` with every flag that stops it acting as an agent; the prompt goes
on stdin (variadic flags such as `--tools` would swallow an argument prompt) and the system prompt
through `--system-prompt-file` in the private scratch directory (Linux caps one argument at
128 KiB, which a large or non-English canon passes), so no argument is over a few bytes of
paths and names. The child runs in a
fresh empty directory with a throwaway HOME and TMPDIR and a minimal environment (see
llm/_child_env.py; its own credential passes, no other provider's key and never the hub token),
and a timeout kills its whole process group.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm._attempts import call_model, model_policy
from custodian_runtime.llm._child_env import minimal_env, private_dirs
from custodian_runtime.llm._claude_result import TAIL_CHARS, parse_result
from custodian_runtime.llm._process import ChildTimeout, ChildTooLarge, run_child
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt
from custodian_runtime.net.bounded_http import describe_size
from custodian_runtime.net.retry import Sleep

if TYPE_CHECKING:
    import httpx

DEFAULT_MODEL = "sonnet"
BIN_VAR = "CUSTODIAN_CLAUDE_BIN"
HOME_VAR = "CUSTODIAN_CLAUDE_HOME"
# The CLI retries API errors itself; keep both counts small so they do not multiply.
CLI_MAX_RETRIES = "2"
MAX_ATTEMPTS = 2
# Passed through when set: credentials, and what the CLI needs to reach the API through a proxy.
PASSTHROUGH_VARS = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
)
FIXED_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_MAX_RETRIES": CLI_MAX_RETRIES,
}


def find_claude(env: Mapping[str, str]) -> str | None:
    """The `claude` executable: CUSTODIAN_CLAUDE_BIN, else `claude` on the snapshot's PATH."""
    name = env.get(BIN_VAR, "").strip() or "claude"
    if os.sep in name:
        path = os.path.abspath(name)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    search = env.get("PATH", "")
    if not search:
        return None
    found = shutil.which(name, path=search)
    return os.path.abspath(found) if found else None


def claude_argv(executable: str, model: str, system_file: str) -> list[str]:
    """The argv that makes the CLI one completion: no tools, MCP, settings, turns or session.

    The system prompt is read from `system_file`, never passed as an argument.
    """
    return [
        executable,
        "-p",
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
        "--setting-sources",
        "",
        "--max-turns",
        "1",
        "--no-session-persistence",
        "--permission-mode",
        "dontAsk",
        "--model",
        model,
        "--system-prompt-file",
        system_file,
    ]


def child_env(
    env: Mapping[str, str], home: str, tmp: str, extra: tuple[str, ...] = ()
) -> dict[str, str]:
    """The minimal child environment, the CLI's own credentials and proxy settings, and the
    quieting switches; never the hub token or another provider's key."""
    child = minimal_env(env, home, tmp, extra)
    child.update({name: env[name] for name in PASSTHROUGH_VARS if env.get(name)})
    child.update(FIXED_ENV)
    return child


def write_private(path: Path, text: str) -> Path:
    """Write `text` to a new file only the owner can read; return its path."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


# The binary itself is missing, not executable, or not a program: a setting to fix.
_BINARY_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.EPERM, errno.ENOTDIR})


def spawn_error(executable: str, exc: OSError) -> ConfigError | ModelError:
    """What a failed spawn means: a broken binary is a setting; anything else is the call's."""
    if exc.errno in _BINARY_ERRNOS:
        return ConfigError(
            f"cannot run {executable}: {exc.strerror}; set {BIN_VAR} to a working `claude`",
            setting=BIN_VAR,
        )
    if exc.errno == errno.E2BIG:
        return ModelError(
            "claude-code: the system refused to start the CLI because its arguments and "
            "environment are too long (E2BIG); the prompt goes through a file and stdin, so "
            "shorten the variables passed to it (CUSTODIAN_CMD_ENV)",
            provider=ClaudeCodeModel.provider,
            code="e2big",
        )
    return ModelError(
        f"claude-code: the system could not start the CLI ({exc.strerror}, errno {exc.errno});"
        " try again, or check the machine's memory and process limits",
        provider=ClaudeCodeModel.provider,
        code="spawn_failed",
    )


def tail(text: str) -> str:
    """The last few lines of a stream, for error messages."""
    return text[-TAIL_CHARS:].strip()


class ClaudeCodeModel(Model):
    """Runs `claude -p` once per prompt; at most two attempts (the CLI also retries inside)."""

    provider: ClassVar[str] = "claude-code"

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        executable = find_claude(config.env)
        if executable is None:
            configured = config.env.get(BIN_VAR, "").strip()
            where = f"{configured!r} is not an executable file" if configured else "not on PATH"
            raise ConfigError(
                f"the claude-code model needs the Claude Code CLI ({where}): install it "
                f"(npm install -g @anthropic-ai/claude-code) or set {BIN_VAR} to its path",
                setting=BIN_VAR,
            )
        self._executable = executable
        self._config = config
        self._model = config.model or DEFAULT_MODEL
        self._home = config.env.get(HOME_VAR, "").strip() or None
        self._policy = model_policy(
            config, sleep=sleep, max_attempts=min(MAX_ATTEMPTS, config.max_attempts)
        )

    @property
    def model_name(self) -> str:
        """The configured model id or alias."""
        return self._model

    def complete(self, prompt: Prompt) -> Completion:
        """Run the CLI once (twice if the API was overloaded) and return its result text."""
        return call_model(self._policy, lambda: self._attempt(prompt))

    def _attempt(self, prompt: Prompt) -> Completion:
        with private_dirs("custodian-claude-") as dirs:
            system_file = write_private(dirs.tmp / "system-prompt.md", prompt.system)
            argv = claude_argv(self._executable, self._model, str(system_file))
            home = self._home or str(dirs.home)
            env = child_env(self._config.env, home, str(dirs.tmp), self._config.child_env)
            code, stdout, stderr = self._run(argv, prompt.user, dirs.work, env)
        return parse_result(code, stdout, stderr, model=self._model, provider=self.provider)

    def _run(
        self, argv: list[str], stdin: str, cwd: Path, env: dict[str, str]
    ) -> tuple[int, str, str]:
        try:
            done = run_child(
                argv,
                stdin.encode("utf-8"),
                env=env,
                timeout_s=self._config.attempt_s,
                max_stdout=self._config.max_response_bytes,
                stop=self._config.stop,
                cwd=cwd,
            )
        except OSError as exc:
            raise spawn_error(argv[0], exc) from exc
        except ChildTimeout as exc:
            raise ModelError(
                f"claude-code: no answer within {self._config.attempt_s:g}s; the CLI was killed"
                " (raise CUSTODIAN_LLM_TIMEOUT_S if the model is slow)",
                provider=self.provider,
                code="timeout",
                stderr_tail=tail(exc.stderr),
            ) from None
        except ChildTooLarge as exc:
            raise ModelError(
                f"claude-code: the CLI wrote more than {describe_size(exc.limit)} and was killed"
                " (raise CUSTODIAN_LLM_MAX_BYTES if such answers are expected)",
                provider=self.provider,
                code="too_large",
                stderr_tail=tail(exc.stderr),
            ) from None
        return (
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
        )
