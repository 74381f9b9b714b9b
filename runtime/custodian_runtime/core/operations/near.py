"""Whether two titles name the same thing in other words: the near repeat a create is denied for.

A person reads past case, punctuation, word order, articles and a few filler words ("again",
"once more"), and past one changed word in a title long enough that the rest still says what it
is (`Renew the TLS certificates on the edge` repeats `Rotate the TLS certificates on the edge`).
A number is never read past: `step 3` and `step 4`, `week 1` and `week 2` are two things. Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# How much of the longer title the two must share, word for word, to be one thing: 2 of 3, 3 of
# 4, 4 of 5 words. Below it, a two-word title with one word changed (`Rotate certs`, `Audit
# certs`) names two tasks.
NEAR_REPEAT = 2 / 3
# Words that name nothing: a title with or without them says the same thing.
FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "at",
        "for",
        "to",
        "and",
        "with",
        "from",
        "by",
        "again",
        "once",
        "more",
        "also",
        "please",
        "new",
    ]
)
_WORD = re.compile(r"[^\W_]+")


def title_words(title: str) -> Counter[str]:
    """The words that carry a title's meaning, as a multiset: casefolded, filler dropped, a
    plural `s` of a longer word dropped."""
    folded = unicodedata.normalize("NFKC", title).casefold()
    words = (w for w in _WORD.findall(folded) if w not in FILLER)
    return Counter(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                   for w in words)  # fmt: skip


def similarity(one: str, other: str) -> float:
    """The share of the longer title's meaningful words that the other has too (0 to 1)."""
    a, b = title_words(one), title_words(other)
    longer = max(a.total(), b.total())
    if longer == 0:
        return 1.0 if _folded(one) == _folded(other) else 0.0
    return (a & b).total() / longer


def nearly_repeats(one: str, other: str) -> bool:
    """Whether `one` names what `other` names: similar at NEAR_REPEAT, and the same numbers."""
    a, b = title_words(one), title_words(other)
    if _numbers(a) != _numbers(b):
        return False
    return similarity(one, other) >= NEAR_REPEAT


def _numbers(words: Counter[str]) -> Counter[str]:
    return Counter({w: n for w, n in words.items() if any(c.isdigit() for c in w)})


def _folded(text: str) -> str:
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))
