"""OpenAI chat completions (`POST https://api.openai.com/v1/chat/completions`, Bearer key)."""

from __future__ import annotations

from typing import ClassVar

from custodian_runtime.llm._http import require_key
from custodian_runtime.llm._openai_shape import ChatCompletionsModel
from custodian_runtime.llm.base import ModelConfig

DEFAULT_MODEL = "gpt-4.1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_VAR = "OPENAI_API_KEY"


class OpenAIModel(ChatCompletionsModel):
    """OpenAI's API; sends `max_completion_tokens` (`max_tokens` is deprecated for o-series)."""

    provider: ClassVar[str] = "openai"
    default_model: ClassVar[str] = DEFAULT_MODEL
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    token_field: ClassVar[str] = "max_completion_tokens"

    def auth_headers(self, config: ModelConfig) -> tuple[dict[str, str], str | None]:
        """`Authorization: Bearer $OPENAI_API_KEY`, plus organization and project if set."""
        headers = {"Authorization": f"Bearer {require_key(config, KEY_VAR, self.provider)}"}
        for variable, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            if config.env.get(variable):
                headers[header] = config.env[variable]
        return headers, KEY_VAR
