"""Inert text: controls shown escaped, plain text untouched, prose unable to make headings."""

from __future__ import annotations

import json
import re
import time
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from custodian_runtime.core.inert import (
    BIDI_CONTROLS,
    demote_headings,
    for_markdown,
    for_prose,
    for_terminal,
    for_terminal_json,
    is_control,
)

CONTROLS = (
    [chr(c) for c in range(0x20)]
    + ["\x7f"]
    + [chr(c) for c in range(0x80, 0xA0)]
    + sorted(BIDI_CONTROLS)
    + ["\u2028", "\u2029", "\u200b", "\ufeff", "\U000e0041"]
)
PRINTABLE = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"),
    )
)
ANY_TEXT = st.text(alphabet=st.one_of(st.sampled_from(CONTROLS), st.characters()))


def _raw_controls(text: str, allowed: str = "") -> list[str]:
    return [ch for ch in text if ch not in allowed and ch != "\u200d" and is_control(ch)]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[2Kb", "a\\x1b[2Kb"),
        ("line1\r\nline2", "line1\\r\\nline2"),
        ("tab\there", "tab\\there"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b31m", "csi\\x9b31m"),
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
        ("mark\u200e\u200f\u061c", "mark\\u200e\\u200f\\u061c"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("sep\u2028x", "sep\\u2028x"),
        ("naïve ✓ 日本 👩\u200d💻", "naïve ✓ 日本 👩\u200d💻"),
    ],
)
def test_for_terminal_shows_each_control_escaped(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


def test_every_listed_control_is_escaped() -> None:
    for ch in CONTROLS:
        out = for_terminal(ch)
        assert out != ch and out.startswith("\\"), repr(ch)
        assert "\n" not in out


@given(ANY_TEXT)
def test_for_terminal_output_is_one_line_with_no_raw_control(text: str) -> None:
    out = for_terminal(text)
    assert _raw_controls(out) == []
    assert "\n" not in out and "\r" not in out and "\x1b" not in out
    assert not BIDI_CONTROLS & set(out)


@given(ANY_TEXT)
def test_for_prose_keeps_only_newlines(text: str) -> None:
    out = for_prose(text)
    assert _raw_controls(out, allowed="\n") == []
    assert "\r" not in out
    assert out.count("\n") == text.replace("\r\n", "\n").count("\n")


@given(PRINTABLE)
def test_plain_printable_text_is_unchanged(text: str) -> None:
    assert for_terminal(text) == text
    assert for_prose(text) == text


@given(st.lists(PRINTABLE.filter(lambda s: "\n" not in s)))
def test_prose_lines_survive(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert for_prose(text) == text


def test_for_prose_turns_crlf_into_newline_and_escapes_lone_cr() -> None:
    assert for_prose("one\r\ntwo\rthree\n\x1b[1Afour") == "one\ntwo\\rthree\n\\x1b[1Afour"


NOTE_SECTIONS = "## Actions\n\n### Executed (1)\n\n- `update_task_status` on `web-t-1`"


def _heading_levels(markdown: str) -> list[int]:
    """Levels of ATX and setext headings, the way CommonMark finds them at the top level."""
    levels = []
    lines = markdown.split("\n")
    in_fence = None
    for i, line in enumerate(lines):
        fence = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence and in_fence is None:
            in_fence = fence.group(1)
            continue
        if in_fence is not None:
            if re.match(
                r"^ {0,3}" + re.escape(in_fence[0]) + "{" + str(len(in_fence)) + ",}\\s*$", line
            ):
                in_fence = None
            continue
        atx = re.match(r"^(?:\s*(?:>|[-+*](?=\s)|\d{1,9}[.)](?=\s)))*\s*(#{1,6})(?:[ \t]|$)", line)
        if atx:
            levels.append(len(atx.group(1)))
        elif (
            i > 0
            and lines[i - 1].strip()
            and re.match(r"^(?:[ ]{0,3}>[ ]?)*[ ]{0,3}(=+|-+)[ \t]*$", line)
        ):
            levels.append(1 if "=" in line else 2)
    return levels


def test_prose_imitating_the_notes_sections_is_demoted() -> None:
    out = demote_headings(NOTE_SECTIONS, 3)
    assert out.splitlines()[0] == "##### Actions"
    assert "\n###### Executed (1)\n" in out
    assert min(_heading_levels(out)) > 3


@pytest.mark.parametrize(
    "prose",
    [
        "Executed\n========",
        "Actions\n---",
        "> ## Actions",
        "- ### Executed",
        "1. # Top",
        "   ## indented",
        "- item\n\n    ## inside the item",
        "- a\n  - b\n\n        ### nested",
        "#\n##\t",
        "<h2>Actions</h2>",
    ],
)
def test_no_heading_form_survives(prose: str) -> None:
    out = demote_headings(prose, 3)
    assert min(_heading_levels(out), default=9) > 3
    assert "<h2" not in out


def test_headings_inside_a_fence_are_code_and_stay() -> None:
    prose = "text\n```\n# comment\n---\n```\n# Real"
    assert demote_headings(prose, 3) == "text\n```\n# comment\n---\n```\n#### Real"


def test_an_open_fence_is_closed_so_it_cannot_swallow_the_note() -> None:
    out = demote_headings("look:\n~~~~ text\nstill code", 3)
    assert out.endswith("\n~~~~")


def test_floor_is_checked() -> None:
    with pytest.raises(ValueError, match="floor"):
        demote_headings("# x", 6)
    assert demote_headings("# x", 0) == "# x"


@given(ANY_TEXT)
def test_for_markdown_never_yields_a_high_heading_or_raw_control(text: str) -> None:
    out = for_markdown(text, 3)
    assert _raw_controls(out, allowed="\n") == []
    assert min(_heading_levels(out), default=9) > 3


@given(st.lists(st.sampled_from(["# a", "## b", "### c", "x", "===", "---", "```", "> # q", ""])))
def test_heading_soup_is_demoted(lines: list[str]) -> None:
    out = demote_headings("\n".join(lines), 3)
    assert min(_heading_levels(out), default=9) > 3


def test_categories_cover_the_terminal_dangers() -> None:
    for ch in "\x1b\x9b\x07\x08\x00":
        assert unicodedata.category(ch) == "Cc" and is_control(ch)
    assert not is_control("\u200d")


@given(st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=4), st.sampled_from([None, 2]))
def test_terminal_json_is_the_same_json_with_nothing_hidden(
    value: dict[str, str], indent: int | None
) -> None:
    out = for_terminal_json(value, indent=indent)
    assert json.loads(out) == value
    assert _raw_controls(out, allowed="\n") == []


def test_terminal_json_escapes_c1_bidi_and_tags_but_keeps_letters() -> None:
    out = for_terminal_json({"t": "é\x9b\x7f\u202e日\U000e0041"})
    assert out == '{"t": "é\\u009b\\u007f\\u202e日\\udb40\\udc41"}'


@pytest.mark.parametrize(
    "hostile",
    ["-   " * 5000 + "x", ">  " * 5000 + "=", "1.  " * 5000 + "#x", "- " * 20000 + "-"],
)
def test_hostile_prefixes_are_demoted_in_linear_time(hostile: str) -> None:
    start = time.perf_counter()
    demote_headings(hostile, 3)
    assert time.perf_counter() - start < 1.0
