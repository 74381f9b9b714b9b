"""`cmd:COMMAND`: the prompt goes to a command's stdin; its stdout is the answer.

By default stdin holds the system prompt, a blank line, then the user prompt. A command that
takes them apart names `{system_file}` in one of its words: that word gets the path of a file (in
the child's private TMPDIR) that holds the system prompt, and stdin holds the user prompt alone:
`cmd:./ask.sh --system-file {system_file}`, or `cmd:llm -m local --system-file={system_file}`.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, ClassVar

from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.redact import redact_values
from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm._child_env import minimal_env, private_dirs, secret_values
from custodian_runtime.llm._process import ChildFinished, ChildTimeout, ChildTooLarge, run_child
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt, Usage
from custodian_runtime.net.bounded_http import describe_size

if TYPE_CHECKING:
    import httpx

STDERR_TAIL = 2000  # bytes of a failing command's stderr quoted in the error, the note, --json
# In a word of the command: the path of a file that holds the system prompt (stdin: the user's).
SYSTEM_FILE = "{system_file}"


def said(stderr: bytes | str, secrets: tuple[str, ...]) -> str:
    """The end of a command's stderr for people: known secrets redacted, one inert line, ≤ 2 KB."""
    raw = stderr.encode("utf-8", "replace") if isinstance(stderr, str) else stderr
    # A wider tail first, so that a secret across the cut is still seen whole and redacted.
    text = raw[-2 * STDERR_TAIL :].decode("utf-8", "replace").strip()
    line = for_terminal(redact_values(text, secrets))
    while len(line.encode("utf-8")) > STDERR_TAIL:
        line = line[len(line.encode("utf-8")) - STDERR_TAIL :]
    return line


class CommandModel(Model):
    """Runs a local command once per prompt; a timeout or a non-zero exit is a model error."""

    provider: ClassVar[str] = "cmd"

    def __init__(
        self, config: ModelConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        if not config.argument:
            raise ConfigError("cmd: needs a command, e.g. --llm cmd:./answer.sh", setting="--llm")
        try:
            self._argv = shlex.split(config.argument)
        except ValueError as exc:
            raise ConfigError(f"cannot parse the cmd: command: {exc}", setting="--llm") from None
        if not self._argv:
            raise ConfigError("cmd: needs a command, e.g. --llm cmd:./answer.sh", setting="--llm")
        self._timeout = config.attempt_s
        self._env = dict(config.env)
        self._extra = config.child_env
        self._max_bytes = config.max_response_bytes
        self._stop = config.stop
        self._secrets = secret_values(config.env)

    @property
    def model_name(self) -> str:
        """The command as given."""
        return f"cmd:{shlex.join(self._argv)}"

    @property
    def system_apart(self) -> bool:
        """Whether the command takes the system prompt in a file (`{system_file}`)."""
        return any(SYSTEM_FILE in word for word in self._argv)

    def complete(self, prompt: Prompt) -> Completion:
        """Send the prompt (system and user on stdin, or the system prompt in a file named by
        `{system_file}` and the user prompt on stdin), return stdout."""
        # A minimal environment with a private HOME and TMPDIR: the command is model code and
        # must not see the hub token or any provider key.
        with private_dirs("custodian-cmd-") as dirs:
            env = minimal_env(self._env, dirs.home, dirs.tmp, self._extra)
            if not self.system_apart:
                return self._complete(f"{prompt.system}\n\n{prompt.user}", self._argv, env)
            system = dirs.tmp / "system-prompt.txt"
            system.write_text(prompt.system, encoding="utf-8")
            argv = [word.replace(SYSTEM_FILE, str(system)) for word in self._argv]
            return self._complete(prompt.user, argv, env)

    def _complete(self, text: str, argv: list[str], env: dict[str, str]) -> Completion:
        proc = self._run(text, argv, env)
        out, err = proc.stdout, proc.stderr
        if proc.returncode != 0:
            words = said(err, self._secrets)
            raise ModelError(
                f"{self.model_name} exited with status {proc.returncode}"
                + (f": {words}" if words else ""),
                provider=self.provider,
                stderr_tail=words or None,
            )
        return Completion(
            text=out.decode("utf-8", "replace"),
            model=self.model_name,
            provider=self.provider,
            usage=Usage(),
        )

    def _run(self, text: str, argv: list[str], env: dict[str, str]) -> ChildFinished:
        """The command run to its end, or a ModelError (Interrupted passes through)."""
        try:
            return run_child(
                argv,
                text.encode("utf-8"),
                env=env,
                timeout_s=self._timeout,
                max_stdout=self._max_bytes,
                stop=self._stop,
            )
        except OSError as exc:
            raise ModelError(
                f"cannot start {self._argv[0]!r}: {exc.strerror or exc}", provider=self.provider
            ) from exc
        except ChildTimeout as exc:
            raise ModelError(
                f"{self.model_name} did not answer within {self._timeout:g} s",
                provider=self.provider,
                stderr_tail=said(exc.stderr, self._secrets) or None,
            ) from None
        except ChildTooLarge as exc:
            raise ModelError(
                f"{self.model_name} wrote more than {describe_size(exc.limit)} to stdout and was"
                " stopped; raise CUSTODIAN_LLM_MAX_BYTES if such answers are expected",
                provider=self.provider,
                code="too_large",
                stderr_tail=said(exc.stderr, self._secrets) or None,
            ) from None
