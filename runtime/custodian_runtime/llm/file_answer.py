"""`file:PATH`: the answer is the content of a file (replays, tests, demos)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt, Usage

if TYPE_CHECKING:
    import httpx


class FileModel(Model):
    """Answers every prompt with the text of one file, read at call time."""

    provider: ClassVar[str] = "file"

    def __init__(
        self, config: ModelConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        if not config.argument:
            raise ConfigError("file: needs a path, e.g. --llm file:answer.md", setting="--llm")
        self._path = Path(config.argument)
        check_response_file(self._path)

    @property
    def model_name(self) -> str:
        """The file the answer comes from."""
        return f"file:{self._path}"

    def complete(self, prompt: Prompt) -> Completion:
        """Return the file's content as the model's answer."""
        try:
            text = self._path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelError(
                f"cannot read the response file {self._path}: {exc.strerror or exc}",
                provider=self.provider,
            ) from exc
        except UnicodeDecodeError as exc:
            raise ModelError(
                f"the response file {self._path} is not UTF-8 text", provider=self.provider
            ) from exc
        return Completion(text=text, model=self.model_name, provider=self.provider, usage=Usage())


def check_response_file(path: Path) -> None:
    """A `file:` model whose file cannot be read is a configuration mistake, found up front."""
    fix = "point --llm file:PATH (or CUSTODIAN_LLM) at a readable file"
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise ConfigError(f"the response file {path} {what}: {fix}", setting="--llm")
    try:
        path.open("rb").close()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the response file {path} ({exc.strerror or exc}): {fix}", setting="--llm"
        ) from None
