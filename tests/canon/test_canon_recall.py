"""The eval of retrieval: on a generated canon of 600 sections, each scenario's governing sections
are shown at the default budget (recall at least 0.95); bench/canon_retrieval.py times it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from custodian_runtime.canon.library import read_canon_dir
from custodian_runtime.canon.retrieve import run_canon
from custodian_runtime.core.context.prompt import PromptInputs
from custodian_runtime.core.context.queries import state_queries
from custodian_runtime.core.limits import DEFAULT
from custodian_runtime.render.prompt import render_prompt
from support import canongen
from support.context import typical_overview
from support.runs import CANON

RECALL_AT_LEAST = 0.95
SCENARIOS = 24  # of the 40 `make bench` measures: 168 sections that must be shown


@dataclass(frozen=True)
class World:
    canon: Path
    memory: Path
    sections: int


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("canon")
    (root / "constitution.md").write_text((CANON / "constitution.md").read_text("utf-8"), "utf-8")
    sections = canongen.write_canon(root)
    yield World(root, root.parent / "memory", sections)


def shown(world: World, scenario: canongen.Scenario, budget: int) -> set[tuple[str, str]]:
    """The (file, heading) of each section a run of `scenario` is shown."""
    got = run_canon(world.canon, "ops", state_queries(scenario.summary), world.memory)
    inputs = PromptInputs(
        domain="ops", now=canongen.NOW, overview=typical_overview(), summary=scenario.summary,
        constitution=got.constitution.text, domain_guidance=None, nonce="0a1b2c3d4e5f",
        token_budget=budget, canon_ranked=got.ranked, canon_sections=got.sections,
    )  # fmt: skip
    rendered = render_prompt(inputs)
    assert rendered.estimated_tokens <= budget
    return {(s.file, s.heading) for s in rendered.canon}


def test_the_generated_canon_is_larger_than_any_prompt(world: World) -> None:
    assert world.sections >= 500
    library = read_canon_dir(world.canon).library
    assert len(library) == 100
    assert sum(len(f.text) for f in library) // 4 > DEFAULT.token_budget  # chars/4: tokens


def test_each_scenario_names_sections_the_canon_holds(world: World) -> None:
    files = read_canon_dir(world.canon).files
    for scenario in canongen.scenarios():
        assert len(scenario.must) == 7
        for file, heading in scenario.must:
            assert f"\n## {heading}\n" in files[file].text


def test_recall_at_the_default_budget_is_at_least_95_percent(world: World) -> None:
    needed = found = 0
    for scenario in canongen.scenarios(SCENARIOS):
        needed += len(scenario.must)
        found += len(scenario.must & shown(world, scenario, DEFAULT.token_budget))
    assert found / needed >= RECALL_AT_LEAST, f"recall {found}/{needed}"
