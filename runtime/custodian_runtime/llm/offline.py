"""`offline`: a deterministic rule-based planner that needs no model and no network."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from custodian_runtime.core.tooling.offline_planner import offline_plan
from custodian_runtime.core.tooling.planning_facts import PlanningFacts
from custodian_runtime.errors import ModelError
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt, Usage

if TYPE_CHECKING:
    import httpx


class OfflinePlanner(Model):
    """Plans from the structured observation with fixed rules (core/tooling/offline_planner.py)."""

    provider: ClassVar[str] = "offline"
    uses_facts: ClassVar[bool] = True
    is_rule_based: ClassVar[bool] = True

    def __init__(
        self, config: ModelConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self._config = config

    @property
    def model_name(self) -> str:
        """The planner's name as it appears in notes and the journal."""
        return "offline-rules-v1"

    def complete(self, prompt: Prompt) -> Completion:
        """Answer with the rule-based plan for `prompt.facts`."""
        if not isinstance(prompt.facts, PlanningFacts):
            raise ModelError(
                "the offline planner needs the structured observation (prompt.facts)",
                provider=self.provider,
            )
        return Completion(
            text=offline_plan(prompt.facts),
            model=self.model_name,
            provider=self.provider,
            usage=Usage(input_tokens=0, output_tokens=0, cost_usd=0.0),
        )
