"""Fair selection over generated domains: every section gets a share, budgets hold, counts add up"""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_runtime.core.context._items import Piece
from custodian_runtime.core.context._select import Candidates, select
from custodian_runtime.core.context.prompt import build_view
from custodian_runtime.core.context.tokens import estimate_tokens
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.render.prompt import render_prompt
from support.context import NONCE, typical_inputs
from support.domaingen import generated_summary


@cache
def domain(tasks: int, seed: int) -> DomainSummary:
    """A generated domain, built once per size and seed."""
    return generated_summary(tasks, seed=seed)


def lines(text: str) -> list[str]:
    """The item lines of every data block in a rendered prompt."""
    out, inside = [], False
    for line in text.split("\n"):
        if line.startswith("<<<DATA ") and line.endswith(">>>") and ":" in line:
            inside = True
        elif line == f"<<<END DATA {NONCE}>>>":
            inside = False
        elif inside:
            out.append(line)
    return out


@settings(max_examples=25, deadline=None)
@given(
    tasks=st.sampled_from([1, 7, 60, 400, 2000]),
    seed=st.integers(0, 3),
    budget=st.integers(min_value=300, max_value=30000),
)
def test_selection_stays_within_the_room_and_counts_add_up(
    tasks: int, seed: int, budget: int
) -> None:
    summary = domain(tasks, seed)
    view = build_view(typical_inputs(summary=summary), reserved_tokens=24000 - budget)
    assert view.tokens <= budget
    shown_tokens = sum(estimate_tokens(i + "\n") for s in view.sections for i in s.items)
    assert shown_tokens <= view.tokens
    for s in view.sections:
        assert len(s.items) + s.omitted == s.total, s.key
        assert view.omitted.get(s.key, 0) == s.omitted


def _demand(summary: DomainSummary) -> int:
    # Enough room for the block markers and the first item's compact line of every section.
    view = build_view(typical_inputs(summary=summary, token_budget=10**9))
    costs = [
        estimate_tokens(f"{s.opening}\n{view.data_close}\nmore ")
        + estimate_tokens(s.items[0] + "\n")
        for s in view.sections
        if s.items
    ]
    return len(costs) * max(costs)


@settings(max_examples=20, deadline=None)
@given(tasks=st.sampled_from([5, 80, 1500]), seed=st.integers(0, 3), extra=st.integers(0, 5000))
def test_no_section_with_items_is_starved_when_each_can_have_a_minimum_share(
    tasks: int, seed: int, extra: int
) -> None:
    summary = domain(tasks, seed)
    room = _demand(summary) + extra
    view = build_view(typical_inputs(summary=summary, token_budget=room))
    for s in view.sections:
        assert s.total == 0 or s.items, f"{s.key} has {s.total} items and shows none"


def test_a_hundred_thousand_tasks_still_show_every_kind_of_task() -> None:
    summary = domain(100_000, 1)
    rendered = render_prompt(typical_inputs(summary=summary))
    assert rendered.estimated_tokens <= 24000
    for key in ("in_progress", "blocked", "todo", "decisions", "flags", "events", "closed"):
        assert f"<<<DATA {NONCE} {key}:" in rendered.user, key
        assert rendered.omitted.get(key, 0) > 0 or key == "events"
    assert sum(rendered.omitted.values()) > 90_000
    assert len(lines(rendered.user)) > 200


def test_a_section_that_needs_less_than_its_share_gives_the_rest_to_the_others() -> None:
    small = Candidates("small", [lambda: Piece("x " * 10)])
    big = Candidates("big", [lambda n=n: Piece(f"item {n} " * 5) for n in range(1000)])  # type: ignore[misc]
    chosen = select([small, big], 1000, estimate_tokens)
    assert chosen.shown["small"] == ("x " * 10,)
    assert chosen.tokens <= 1000
    alone = select([big], 1000, estimate_tokens)
    # The big section gets all but what the small one used: no share is left idle.
    assert len(chosen.shown["big"]) >= len(alone.shown["big"]) - 1
    assert chosen.omitted["big"] == 1000 - len(chosen.shown["big"])


def test_compact_forms_are_used_only_when_the_full_form_does_not_fit() -> None:
    piece = Piece("full " * 100, "short")
    roomy = select([Candidates("a", [lambda: piece])], 1000, estimate_tokens)
    tight = select([Candidates("a", [lambda: piece])], 10, estimate_tokens)
    assert roomy.shown["a"] == (piece.full,) and roomy.compacted == 0
    assert tight.shown["a"] == ("short",) and tight.compacted == 1


def test_the_selection_is_deterministic_and_ignores_the_hub_s_order() -> None:
    summary = domain(2000, 2)
    flipped = summary.model_copy(update={"workstreams": tuple(reversed(summary.workstreams))})
    first = build_view(typical_inputs(summary=summary, token_budget=8000))
    assert first == build_view(typical_inputs(summary=flipped, token_budget=8000))
