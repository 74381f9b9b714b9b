"""The model specs the runtime knows: the one table the registry, the CLI and settings read.

Importing this module costs nothing beyond itself, so `custodian --help` can list the specs.
"""

from __future__ import annotations

# The spec that asks no model: the run plans by fixed rules from what it observed (run/).
RULES = "offline"
# name -> "module:Class": the model adapters; a spec is NAME or NAME:ARGUMENT.
ADAPTERS: dict[str, str] = {
    "file": "custodian_runtime.llm.file_answer:FileModel",
    "cmd": "custodian_runtime.llm.command:CommandModel",
    "claude-code": "custodian_runtime.llm.claude_code:ClaudeCodeModel",
    "anthropic": "custodian_runtime.llm.anthropic:AnthropicModel",
    "openai": "custodian_runtime.llm.openai:OpenAIModel",
    "openrouter": "custodian_runtime.llm.openrouter:OpenRouterModel",
    "gemini": "custodian_runtime.llm.gemini:GeminiModel",
    "ollama": "custodian_runtime.llm.ollama:OllamaModel",
    "openai-compatible": "custodian_runtime.llm.openai_compatible:OpenAICompatibleModel",
}
# Every spec a person may give: the rules, then the model adapters.
SPECS: tuple[str, ...] = (RULES, *ADAPTERS)
# Specs whose argument is required, and what the argument is (file:PATH, cmd:COMMAND).
ARGUMENTS: dict[str, str] = {"file": "PATH", "cmd": "COMMAND"}
NEEDS_ARGUMENT = frozenset(ARGUMENTS)
# Every spec as help and errors list it: the plain names, then those that take an argument.
SPEC_CHOICES = ", ".join(
    [name for name in SPECS if name not in ARGUMENTS]
    + [f"{name}:{placeholder}" for name, placeholder in ARGUMENTS.items()]
)
