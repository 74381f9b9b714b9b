"""A provider-neutral token estimate that errs high.

Byte-pair tokenizers (cl100k and its kin) first cut text into pieces: a run of letters with at most
one leading space or mark, up to three digits, a run of marks, a run of white space; each piece
then becomes one or more tokens, and no token spans two pieces or is shorter than one byte. The
estimate walks the same kinds of runs and charges each a little more than a tokenizer would:

- a word of ASCII letters (a capital at most, then small letters): one token, plus a fraction for
  each further letter; a run of capitals, which tokenizers split far more, costs more per letter;
- a run of digits: one token per three digits (every one-to-three-digit number is one token);
- a run of ASCII marks: one token, plus half a token per further mark;
- white space: a single space or tab before a letter or mark is free (it joins that piece);
  otherwise a run costs one token, plus a fraction per further character;
- any other character: its UTF-8 length, which no byte-level tokenizer can exceed.

The fractions are calibrated on the demo prompts, id-heavy text, prose and CJK text so that the
estimate is never below the cl100k count; `make bench` prints the ratio.
"""

from __future__ import annotations

import re

__all__ = ["estimate_tokens"]

# In twentieths of a token, so that the sum is exact and the same on every machine.
UNIT = 20
LETTER_EXTRA = 1  # per ASCII letter after a run's first
LONG_EXTRA = 4  # and again per letter after a run's eighth
CAPITALS_EXTRA = 20  # per capital after the first of a run of two or more capitals
MARK_EXTRA = 10  # per ASCII mark after a run's first
SPACE_EXTRA = 10  # per white-space character after a run's first

_RUN = re.compile(
    r"(?P<capitals>[A-Z]{2,})|(?P<letters>[A-Z]?[a-z]+|[A-Z])|(?P<digits>[0-9]+)"
    r"|(?P<space>[ \t]+)|(?P<newlines>[\r\n]+)"
    r"|(?P<marks>[!-/:-@\[-`{-~]+)|(?P<other>[^\x00-\x7f]+|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+)"
)
_JOINS_NEXT = re.compile(r"[A-Za-z!-/:-@\[-`{-~]")


def estimate_tokens(text: str) -> int:
    """At least as many tokens as a cl100k-like tokenizer makes of `text`, rounded up."""
    total = 0
    for match in _RUN.finditer(text):
        total += _run_cost(match.lastgroup, match.group(), text, match.end())
    return -(-total // UNIT)


def _run_cost(kind: str | None, run: str, text: str, end: int) -> int:
    n = len(run)
    if kind == "letters":
        return UNIT + LETTER_EXTRA * (n - 1) + LONG_EXTRA * max(0, n - 8)
    if kind == "capitals":
        return UNIT + CAPITALS_EXTRA * (n - 1)
    if kind == "digits":
        return UNIT * -(-n // 3)
    if kind == "marks":
        return UNIT + MARK_EXTRA * (n - 1)
    if kind == "other":
        return UNIT * len(run.encode("utf-8", "surrogatepass"))
    if kind == "space" and n == 1 and _JOINS_NEXT.match(text, end):
        return 0
    return UNIT + SPACE_EXTRA * (n - 1)
