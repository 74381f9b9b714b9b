"""Untrusted text made inert before it reaches a prompt.

Hub text (and the runtime's own model-written notes) may hold anything, including text written to
steer a model. It is shown to the model only inside data blocks whose markers it cannot forge, and
with no run of characters that could open or close a Markdown code fence. Text that sits in one
field of a one-line row (`inline`) also has its line breaks, tabs, `|` and backslashes escaped, so
it can end neither its line nor its field.
"""

from __future__ import annotations

import re
import unicodedata

from custodian_runtime.core.context._confusables_table import MARKER_CONFUSABLES
from custodian_runtime.core.contract import ID_PATTERN, is_domain

# The markers carry a random per-run nonce that the shell draws (secrets) and passes in: text
# written before the run, by hub users or by the last run's model, cannot hold it.
NONCE_PATTERN = r"^[0-9a-f]{12,64}$"
INVALID_ID = "INVALID_ID"
INVALID_DOMAIN = "INVALID_DOMAIN"

# Look-alikes of the characters that build fences and markers, folded so they cannot imitate them:
# fullwidth and small forms, and every confusable that Unicode's UTS #39 data lists for them.
_LOOKALIKES = str.maketrans(
    {
        "\uff1c": "<",
        "\ufe64": "<",
        "\uff1e": ">",
        "\ufe65": ">",
        "\uff40": "`",
        "\uff5e": "~",
        **MARKER_CONFUSABLES,
    }
)
_RUN = re.compile(r"([`~<>])\1{2,}")
_NEWLINES = re.compile(r"\r\n?|[\u2028\u2029\x85]")
_BLANK_LINES = re.compile(r"\n{3,}")
_ZERO_WIDTH_JOINER = "\u200d"  # kept: it holds emoji sequences together
_ID = re.compile(ID_PATTERN)
_FIELD = re.compile(r"^[a-z][a-z0-9_.]{0,39}$")


def neutralize(text: str, limit: int) -> str:
    """Untrusted text made inert: cut to `limit`, controls gone, fences and markers broken."""
    if limit < 0:
        raise ValueError(f"limit must be zero or more, got {limit}")
    cut = len(text) - limit
    kept = text[:limit] if cut > 0 else text
    clean = _break_runs(_strip_controls(_NEWLINES.sub("\n", kept).translate(_LOOKALIKES)))
    clean = _BLANK_LINES.sub("\n\n", clean).strip()
    if cut > 0:
        clean = f"{clean}…[truncated {cut} chars]"
    return clean


def _strip_controls(text: str) -> str:
    # Cc: C0/C1 controls (escape sequences, NUL...); Cf: invisible format characters such as
    # bidirectional overrides and zero-width spaces, which can hide text from a reader.
    return "".join(
        ch
        for ch in text
        if ch in "\n\t"
        or ch == _ZERO_WIDTH_JOINER
        or unicodedata.category(ch) not in ("Cc", "Cf", "Cs")
    )


def _break_runs(text: str) -> str:
    # A run of three or more backticks or tildes could open or close a fence, and of `<` or `>`
    # could imitate a data marker; pairs separated by spaces keep the text readable.
    return _RUN.sub(lambda m: " ".join(_pairs(m.group(0))), text)


def _pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(0, len(run), 2)]


def safe_id(value: str) -> str:
    """The id when it matches the contract's pattern; otherwise a placeholder no write accepts."""
    return value if _ID.fullmatch(value) else INVALID_ID


def safe_domain(value: str) -> str:
    """The domain name when it matches the contract's pattern; otherwise a placeholder."""
    return value if is_domain(value) else INVALID_DOMAIN


_INLINE_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\t": "\\t", "|": "\\|"})


def inline(text: str, limit: int) -> str:
    """Untrusted text for one field of a row: neutralized; line breaks, tabs, `|`, `\\` escaped."""
    return neutralize(text, limit).translate(_INLINE_ESCAPES)


def data_open(nonce: str) -> str:
    """The start of this run's opening markers: `<<<DATA <nonce>`."""
    if not re.fullmatch(NONCE_PATTERN, nonce):
        raise ValueError(f"the data marker nonce must match {NONCE_PATTERN}; draw it with secrets")
    return f"<<<DATA {nonce}"


def data_close(nonce: str) -> str:
    """This run's closing marker: `<<<END DATA <nonce>>>>`."""
    data_open(nonce)  # the same check
    return f"<<<END DATA {nonce}>>>"


def data_block(item_id: str, field: str, text: str, limit: int, nonce: str) -> str:
    """One untrusted field in its own delimited block, tagged with the item's id and the field."""
    if not _FIELD.fullmatch(field):
        raise ValueError(f"field name {field!r} must match {_FIELD.pattern}")
    inner = neutralize(text, limit).replace(nonce, "[nonce]")
    return f"{data_open(nonce)} id={safe_id(item_id)} field={field}>>>{inner}{data_close(nonce)}"
