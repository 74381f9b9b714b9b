"""Any server speaking OpenAI's `/v1/chat/completions` (vLLM, llama.cpp, LM Studio, gateways)."""

from __future__ import annotations

from typing import ClassVar

from custodian_runtime.errors import ConfigError
from custodian_runtime.llm._http import BASE_URL_SETTING
from custodian_runtime.llm._openai_shape import ChatCompletionsModel
from custodian_runtime.llm.base import LOCAL_TIMEOUT_S, LOCAL_TOTAL_S, ModelConfig

# llama.cpp serves whatever it loaded under any name; vLLM needs the served name (set the model).
DEFAULT_MODEL = "default"
KEY_VAR = "OPENAI_COMPATIBLE_API_KEY"


class OpenAICompatibleModel(ChatCompletionsModel):
    """An OpenAI-shaped server at a required base URL; optional key; usage may be missing."""

    provider: ClassVar[str] = "openai-compatible"
    default_model: ClassVar[str] = DEFAULT_MODEL
    token_field: ClassVar[str] = "max_tokens"
    # llama.cpp, vLLM and LM Studio hold a string to its maxLength: no loop inside one text.
    text_lengths: ClassVar[bool] = True
    # A local server on a CPU: a cold call can take a quarter of an hour.
    default_timeout_s: ClassVar[float] = LOCAL_TIMEOUT_S
    default_total_s: ClassVar[float] = LOCAL_TOTAL_S

    def resolve_base_url(self, config: ModelConfig) -> str:
        """The configured base URL; there is no default server."""
        if not config.base_url:
            raise ConfigError(
                "the openai-compatible model needs the server's URL: set "
                f"{BASE_URL_SETTING}, e.g. http://127.0.0.1:8000/v1",
                setting=BASE_URL_SETTING,
            )
        return config.base_url

    def auth_headers(self, config: ModelConfig) -> tuple[dict[str, str], str | None]:
        """A Bearer key only if OPENAI_COMPATIBLE_API_KEY is set."""
        key = config.env.get(KEY_VAR, "").strip()
        return ({"Authorization": f"Bearer {key}"} if key else {}), KEY_VAR
