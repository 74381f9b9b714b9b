"""Text from the model or the hub made inert before a person reads it.

A terminal obeys control characters: CR and LF rewrite lines, ESC starts ANSI sequences that
move the cursor or recolour text, and bidirectional controls reorder what is shown. Markdown
obeys headings, raw HTML and fences. Every function here shows such characters as visible
escapes (`\\x1b`, `\\n`, `\\u202e`) or takes away their structure, and leaves plain printable
text as it is.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

# Bidirectional controls: embeddings, overrides, isolates and marks (all of category Cf).
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
_ZERO_WIDTH_JOINER = "\u200d"  # kept: it holds emoji sequences together
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Cc: C0, DEL and C1; Cf: invisible format characters (bidi, zero-width, tags); Zl/Zp: line and
# paragraph separators, which some viewers break lines on; Cs: lone surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_CRLF = re.compile(r"\r\n")
MAX_FLOOR = 5


def is_control(ch: str) -> bool:
    """True for a character a person should see escaped rather than have the viewer obey."""
    return ch != _ZERO_WIDTH_JOINER and unicodedata.category(ch) in _HIDDEN_CATEGORIES


def escape_char(ch: str) -> str:
    """One character as a visible escape: `\\n`, `\\x1b`, `\\u202e` or `\\U000e0041`."""
    code = ord(ch)
    if ch in _SHORT:
        return _SHORT[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def for_terminal(text: str) -> str:
    """One line for a terminal: every control, newline and bidi character shown escaped."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(escape_char(ch) if is_control(ch) else ch for ch in text)


def for_prose(text: str) -> str:
    """Multi-line prose: like `for_terminal`, but a newline (or CRLF) stays a newline."""
    lines = _CRLF.sub("\n", text).split("\n")
    return "\n".join(for_terminal(line) for line in lines)


def for_terminal_json(value: Any, **dumps: Any) -> str:
    """JSON with non-ASCII kept readable, but DEL, C1, bidi and other hidden characters escaped.

    `json.dumps(..., ensure_ascii=False)` escapes only C0; the rest would reach the terminal raw.
    The result is the same JSON value, still valid, with those characters as `\\uXXXX`.
    """
    text = json.dumps(value, ensure_ascii=False, **dumps)
    if text.isascii() and "\x7f" not in text:
        return text
    # Outside strings JSON holds only ASCII, and C0 inside strings is already escaped.
    return "".join(_json_escape(ch) if ord(ch) > 0x7E and is_control(ch) else ch for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


# Container prefixes (block quotes, list markers) and any indent before a heading marker: a
# heading inside a quote or a (nested) list item is still a heading. Only the `[ \t]*` runs take
# blanks and each is followed by a non-blank, so matching stays linear on hostile input.
_PREFIX = r"(?P<prefix>(?:[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t])))*[ \t]*)"
_ATX = re.compile(_PREFIX + r"(?P<marks>#{1,6})(?=[ \t]|$)")
_SETEXT = re.compile(_PREFIX + r"(?P<rule>=+|-+)[ \t]*$")
_HTML_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def demote_headings(markdown: str, floor: int) -> str:
    """Markdown in which no heading is at level `floor` or above (level 1 is the top).

    ATX headings move down by `floor` levels (never past 6); setext underlines are escaped so
    they stay text; the `<` that would open raw HTML (`<h2>`, `<!--`, `<details>`) becomes
    `&lt;`. Lines inside fenced blocks are left alone, and a fence left open is closed so it
    cannot swallow what follows.
    """
    if not 0 <= floor <= MAX_FLOOR:
        raise ValueError(f"floor must be between 0 and {MAX_FLOOR}, got {floor}")
    if floor == 0:
        return markdown
    lines = markdown.split("\n")
    fenced = _fenced_lines(lines)
    out = [line if i in fenced else _demote_line(line, floor) for i, line in enumerate(lines)]
    return "\n".join(out) + _close_open_fence(lines)


def _demote_line(line: str, floor: int) -> str:
    atx = _ATX.match(line)
    if atx is not None:
        level = min(len(atx.group("marks")) + floor, 6)
        line = atx.group("prefix") + "#" * level + line[atx.end() :]
    else:
        setext = _SETEXT.match(line)
        if setext is not None and (floor >= 2 or setext.group("rule")[0] == "="):
            line = setext.group("prefix") + "\\" + line[setext.end("prefix") :]
    return _HTML_TAG.sub("&lt;", line)


def _fenced_lines(lines: list[str]) -> set[int]:
    from custodian_runtime.core._fences import find_fences  # off the CLI's startup path

    inside: set[int] = set()
    for fence in find_fences(lines):
        inside.update(range(fence.first_line, fence.end_line))
    return inside


def _close_open_fence(lines: list[str]) -> str:
    from custodian_runtime.core._fences import find_fences

    fences = find_fences(lines)
    if not fences or fences[-1].closed:
        return ""
    opening = lines[fences[-1].first_line].lstrip(" ")
    marker = opening[0] * (len(opening) - len(opening.lstrip(opening[0])))
    return "\n" + marker


def for_markdown(prose: str, floor: int) -> str:
    """Model prose for a Markdown document: controls escaped, no heading at `floor` or above."""
    return demote_headings(for_prose(prose), floor)


def markdown_line(text: str, floor: int) -> str:
    """One line of model or hub text in a Markdown document: like `for_markdown`, on one line."""
    return demote_headings(for_terminal(text), floor)


def code_span(text: str) -> str:
    """`text` as one inline code span that no backtick inside it can end early."""
    shown = for_terminal(text)
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"
