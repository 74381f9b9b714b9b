"""Ollama through its OpenAI-compatible endpoint (`http://localhost:11434/v1/chat/completions`)."""

from __future__ import annotations

from typing import ClassVar

from custodian_runtime.llm._openai_shape import ChatCompletionsModel
from custodian_runtime.llm.base import LOCAL_TIMEOUT_S, LOCAL_TOTAL_S, ModelConfig

DEFAULT_MODEL = "llama3.1"
DEFAULT_HOST = "http://localhost:11434"
DEFAULT_PORT = 11434
# Ollama ignores the key; a proxy in front of it may want one.
KEY_VAR = "OLLAMA_API_KEY"


def host_url(host: str) -> str:
    """`127.0.0.1`, `127.0.0.1:11434` or `http://host:port` -> a URL with scheme and port."""
    host = host.strip().rstrip("/")
    scheme, sep, rest = host.partition("://")
    if not sep:
        scheme, rest = "http", host
    authority, slash, path = rest.partition("/")
    if ":" not in authority.rsplit("]", 1)[-1]:
        authority = f"{authority}:{DEFAULT_PORT}"
    return f"{scheme}://{authority}{slash}{path}"


class OllamaModel(ChatCompletionsModel):
    """A local Ollama server; sends `max_tokens` (Ollama drops `max_completion_tokens`)."""

    provider: ClassVar[str] = "ollama"
    default_model: ClassVar[str] = DEFAULT_MODEL
    default_base_url: ClassVar[str] = DEFAULT_HOST
    token_field: ClassVar[str] = "max_tokens"
    # Its grammar (llama.cpp's) holds a string to its maxLength.
    text_lengths: ClassVar[bool] = True
    # A local server on a CPU: a cold call can take a quarter of an hour.
    default_timeout_s: ClassVar[float] = LOCAL_TIMEOUT_S
    default_total_s: ClassVar[float] = LOCAL_TOTAL_S

    def resolve_base_url(self, config: ModelConfig) -> str:
        """CUSTODIAN_LLM_BASE_URL, else OLLAMA_HOST, else localhost:11434."""
        if config.base_url:
            return config.base_url
        host = config.env.get("OLLAMA_HOST", "").strip()
        return host_url(host) if host else DEFAULT_HOST

    def auth_headers(self, config: ModelConfig) -> tuple[dict[str, str], str | None]:
        """A Bearer key only if OLLAMA_API_KEY is set."""
        key = config.env.get(KEY_VAR, "").strip()
        return ({"Authorization": f"Bearer {key}"} if key else {}), KEY_VAR
