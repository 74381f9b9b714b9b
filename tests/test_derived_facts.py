"""Facts once kept by hand in several places come from one source, or a test ties them."""

from __future__ import annotations

from custodian_runtime.core._context_items import COLUMNS
from custodian_runtime.core._prompt_sections import PROMPT_SECTIONS
from custodian_runtime.core.context import CATEGORIES, SECTIONS, build_view, section_items
from test_context_fixtures import typical_inputs


def test_the_prompt_sections_have_one_table() -> None:
    keys = [s.key for s in PROMPT_SECTIONS]
    assert len(set(keys)) == len(keys) == 10
    assert list(SECTIONS) == keys == [key for key, *_ in CATEGORIES] == list(COLUMNS)
    assert list(section_items(typical_inputs())) == keys  # every section gets its items
    view = build_view(typical_inputs())
    assert [(s.key, s.heading) for s in view.sections] == [
        (p.key, p.heading) for p in PROMPT_SECTIONS
    ]
    assert all(f" {s.key}: {COLUMNS[s.key]}>>>" in s.opening for s in view.sections)
