"""The model interface: one required method, `complete`.

Every adapter (file replay, subprocess, or a vendor's HTTP API) takes a `Prompt`'s text and
returns a `Completion`'s text. Vendor wire formats stay inside each adapter's own file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from custodian_runtime.process.stopping import OnRetry, StopFlag

DEFAULT_MAX_RESPONSE_BYTES = 8 << 20  # a model answer larger than this stops the call
SCHEMA_NAME = "action_plan"
# An attempt's and a whole call's limits when neither the settings nor the adapter set them.
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_TOTAL_S = 600.0
# A model served on this machine's CPU (Ollama, llama.cpp): a cold call of a few thousand tokens
# in and out can take a quarter of an hour on two cores.
LOCAL_TIMEOUT_S = 1800.0
LOCAL_TOTAL_S = 3600.0  # what a provider is told the answer's schema (or tool) is called


@dataclass(frozen=True)
class Usage:
    """Token counts and cost as the provider reported them; None where it did not."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class Prompt:
    """What one model call is given: the text, and the answer's JSON schema when the adapter
    constrains its output to one (`Model.schema_output`) and the settings ask for it."""

    system: str
    user: str
    max_output_tokens: int = 8192
    answer_schema: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Completion:
    """One model answer: the text, the model that produced it, and what it cost."""

    text: str
    model: str
    provider: str
    usage: Usage = field(default_factory=Usage)
    request_id: str | None = None
    # The answer was asked for in the prompt's JSON schema: a bare JSON object is the plan.
    structured: bool = False


@dataclass(frozen=True)
class ModelConfig:
    """Everything an adapter may need, resolved by `settings` (adapters never read the environment).

    `spec` is the full spec string (`anthropic`, `file:/path`, `cmd:./answer.sh`); `argument` is the
    part after the first colon, if any. `env` is a snapshot of the environment taken by settings, in
    which adapters look up their own key variables. `child_env` names the extra variables a model
    child process may see (`CUSTODIAN_CMD_ENV`, checked by settings). `stop` and `on_retry` are
    the run's, not settings: a signal cuts the call short, and each failed attempt is reported.
    """

    spec: str
    argument: str | None = None
    model: str | None = None
    max_output_tokens: int = 8192
    # None: not sent (the server's own); planning wants the most likely answer, not variety.
    temperature: float | None = 0.0
    # Ask an adapter that can (`Model.schema_output`) for an answer in the plan's JSON schema.
    structured: bool = True
    # None: the adapter's own default (`Model.default_timeout_s`, `default_total_s`), which
    # build_model fills in: a model on a local CPU takes far longer than a hosted one.
    timeout_s: float | None = None
    base_url: str | None = None
    max_attempts: int = 4
    max_retry_wait_s: float = 60.0
    max_total_s: float | None = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    env: Mapping[str, str] = field(default_factory=dict)
    child_env: tuple[str, ...] = ()
    stop: StopFlag | None = field(default=None, compare=False, repr=False)
    on_retry: OnRetry | None = field(default=None, compare=False, repr=False)

    @property
    def attempt_s(self) -> float:
        """The limit of one attempt, answer included."""
        return DEFAULT_TIMEOUT_S if self.timeout_s is None else self.timeout_s

    @property
    def total_s(self) -> float:
        """The limit of the whole call: every attempt and every wait."""
        return DEFAULT_TOTAL_S if self.max_total_s is None else self.max_total_s


class Model(ABC):
    """A language model, or something that answers like one. Subclasses implement `complete`."""

    provider: ClassVar[str] = "unnamed"
    # Whether the adapter can constrain the answer to a JSON schema (the provider's own field).
    schema_output: ClassVar[bool] = False
    # The limits it is given unless the settings say otherwise (CUSTODIAN_LLM_TIMEOUT_S, ...).
    default_timeout_s: ClassVar[float] = DEFAULT_TIMEOUT_S
    default_total_s: ClassVar[float] = DEFAULT_TOTAL_S

    @property
    def model_name(self) -> str:
        """The model that will answer, as far as it is known before the call."""
        return self.provider

    @abstractmethod
    def complete(self, prompt: Prompt) -> Completion:
        """Answer one prompt. Subclasses must implement `complete(prompt) -> Completion`."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement complete(prompt) -> Completion"
        )

    def close(self) -> None:  # noqa: B027 - optional hook, most adapters hold nothing
        """Release what the adapter holds (an HTTP client, a temporary directory)."""
