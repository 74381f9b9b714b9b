"""The two planners a run decides with, chosen by the configured spec.

A model planner is an `llm/` adapter: the rendered prompt's text in, the answer's text out. The
rule planner needs no model: the structured observation (`PlanningFacts`) in, a plan out, by the
fixed rules of `core/tooling/offline_planner.py`. Its plan is written as the same JSON a model
answers with, so extraction, the journal's `model_response` record and replay treat both alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from custodian_runtime.core.tooling.offline_planner import offline_plan
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Usage
from custodian_runtime.llm.registry import build_model, split_spec
from custodian_runtime.llm.specs import RULES

if TYPE_CHECKING:
    import httpx

    from custodian_runtime.core.tooling.planning_facts import PlanningFacts


class RulePlanner:
    """Plans from the structured observation with fixed rules; no model, no network."""

    provider: ClassVar[str] = RULES
    model_name: ClassVar[str] = "offline-rules-v1"  # as notes and the journal name it
    schema_output: ClassVar[bool] = False  # it writes the plan itself, fenced as a model would

    def plan(self, facts: PlanningFacts) -> Completion:
        """The rule-based plan for `facts`, as the answer a model would give."""
        return Completion(
            text=offline_plan(facts),
            model=self.model_name,
            provider=self.provider,
            usage=Usage(input_tokens=0, output_tokens=0, cost_usd=0.0),
        )

    def close(self) -> None:
        """Nothing is held."""


Planner = Model | RulePlanner


def build_planner(config: ModelConfig, *, transport: httpx.BaseTransport | None = None) -> Planner:
    """The rule planner for the `offline` spec, else the model adapter the spec names."""
    name, _ = split_spec(config.spec)  # an unknown spec is a ConfigError listing the valid ones
    if name == RULES:
        return RulePlanner()
    return build_model(config, transport=transport)
