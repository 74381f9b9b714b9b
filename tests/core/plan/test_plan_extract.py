"""extract_plan: finding the one ```json block, and refusing answers that hold no usable plan."""

from __future__ import annotations

import json

import pytest

from custodian_runtime.core.plan.extract import MAX_DEPTH, extract_plan
from custodian_runtime.errors import PlanRejected
from support.authority import markdown

EMPTY = '{"observations": []}'


def _answer(*parts: str) -> str:
    return "\n".join(parts) + "\n"


def test_one_block_is_extracted_and_the_prose_around_it_is_kept() -> None:
    plan = extract_plan(_answer("# Review", "Before.", "```json", EMPTY, "```", "After."))
    assert plan.prose == "# Review\nBefore.\n\nAfter."
    assert plan.raw_json == EMPTY
    assert plan.items == ()


def test_a_tilde_fence_counts_and_the_info_string_ignores_case_and_blanks() -> None:
    assert extract_plan(_answer("~~~json", EMPTY, "~~~")).raw_json == EMPTY
    assert extract_plan(_answer("```JSON  ", EMPTY, "```")).raw_json == EMPTY
    assert extract_plan(_answer("   ```json", EMPTY, "   ```")).raw_json == EMPTY


@pytest.mark.parametrize(
    "answer",
    [
        "No plan at all.",
        _answer("```", EMPTY, "```"),
        _answer("```python", EMPTY, "```"),
        _answer("```json5", EMPTY, "```"),
        _answer("```json plan", EMPTY, "```"),
        _answer("    ```json", EMPTY, "    ```"),  # four spaces: indented code, not a fence
        _answer("Inline ```json``` is not a fence", EMPTY),
    ],
)
def test_no_json_block_is_rejected_with_what_to_do(answer: str) -> None:
    with pytest.raises(PlanRejected, match=r"no ```json block.*exactly one fenced block"):
        extract_plan(answer)


def test_two_json_blocks_are_rejected_naming_their_lines() -> None:
    answer = _answer("```json", EMPTY, "```", "and", "~~~json", EMPTY, "~~~")
    with pytest.raises(PlanRejected, match=r"2 ```json blocks \(opening on lines 1, 5\)"):
        extract_plan(answer)


def test_a_json_fence_inside_another_fence_is_content_not_a_second_plan() -> None:
    answer = _answer(
        "An example of the format:",
        "````markdown",
        "```json",
        '{"tasks_to_update": [{"task_id": "t-1", "status": "done"}]}',
        "```",
        "````",
        "~~~text",
        "```json",
        "~~~",
        "The plan:",
        "```json",
        EMPTY,
        "```",
    )
    plan = extract_plan(answer)
    assert plan.items == ()
    assert '"t-1"' in plan.prose  # the example stays in the prose, as written


def test_a_shorter_fence_does_not_close_a_longer_one() -> None:
    answer = _answer("````json", '{"observations": ["```"]}', "```", "still inside", "````")
    with pytest.raises(PlanRejected, match="not valid JSON"):
        extract_plan(answer)  # the body runs to the four-backtick line


def test_an_unclosed_json_block_is_rejected_as_cut_off() -> None:
    with pytest.raises(PlanRejected, match=r"opened on line 2 is never closed.*cut off"):
        extract_plan(_answer("Plan:", "```json", EMPTY))


def test_an_unclosed_other_fence_that_swallows_the_plan_is_named() -> None:
    answer = _answer("```python", "x = 1", "```json", EMPTY)
    # CommonMark: ```json closes nothing (it has an info string), so the python block runs on.
    with pytest.raises(PlanRejected, match=r"fence opened on line 1 is never closed"):
        extract_plan(answer)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"observations": [],}', "not valid JSON"),
        ("{observations: []}", "not valid JSON"),
        ('{"observations": [NaN]}', "NaN is not a JSON number; numbers must be finite"),
        ('{"observations": [Infinity]}', "Infinity is not a JSON number"),
        ('{"observations": [-Infinity]}', "-Infinity is not a JSON number"),
        ('{"observations": [1e400]}', "1e400 is too large for a number; numbers must be finite"),
        ('{"proposals": [{"operation": "x", "params": {"n": -1e400}}]}', "-1e400 is too large"),
        ('{"tasks_to_update": [{"task_id": "t", "status": "done", "n": 1E+999}]}', "1E\\+999"),
        ('{"proposals": [], "proposals": []}', "'proposals' appears twice"),
        ('{"a": {"b": 1, "b": 2}}', "'b' appears twice"),
        ("", "not valid JSON"),
    ],
)
def test_invalid_json_is_rejected_saying_why(body: str, message: str) -> None:
    with pytest.raises(PlanRejected, match=message):
        extract_plan(markdown_raw(body))


@pytest.mark.parametrize("body", ["[]", '"plan"', "42", "null", "true"])
def test_a_top_level_that_is_not_an_object_is_rejected(body: str) -> None:
    with pytest.raises(PlanRejected, match="not an object"):
        extract_plan(markdown_raw(body))


def test_nesting_past_the_limit_is_rejected_and_at_the_limit_is_kept() -> None:
    def nested(depth: int) -> str:
        # depth counts the plan object itself and the proposals list and entry around the junk
        inner = "[" * (depth - 4) + "]" * (depth - 4)
        return '{"proposals": [{"operation": "x", "params": {"v": ' + inner + "}}]}"

    assert len(extract_plan(markdown_raw(nested(MAX_DEPTH))).items) == 1
    with pytest.raises(PlanRejected, match=f"deeper than {MAX_DEPTH}"):
        extract_plan(markdown_raw(nested(MAX_DEPTH + 1)))
    with pytest.raises(PlanRejected, match=f"deeper than {MAX_DEPTH}"):
        extract_plan(markdown_raw("[" * 100_000 + "]" * 100_000))


def test_observations_keep_strings_and_the_json_text_of_anything_else() -> None:
    plan = extract_plan(markdown({"observations": ["Quiet week.", 3, {"b": 1, "a": [True]}]}))
    assert plan.observations == ("Quiet week.", "3", '{"a":[true],"b":1}')
    assert plan.items == ()


def test_the_model_text_inside_the_block_is_never_read_as_markdown() -> None:
    document = {"observations": ["```", "~~~json", "text\n```json\nmore"]}
    plan = extract_plan(markdown(document))
    assert plan.observations == tuple(document["observations"])
    assert json.loads(plan.raw_json) == document


def markdown_raw(body: str) -> str:
    return _answer("Here is the plan.", "```json", body, "```")
