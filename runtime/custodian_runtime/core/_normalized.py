"""The normalized text of a proposal: two wordings of one thing compare equal."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from custodian_runtime.core.digest import digest

_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s\W_]+$")


def normalized_text(text: str) -> str:
    """NFKC, casefolded, whitespace collapsed to one space, trailing punctuation stripped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING.sub("", _SPACE.sub(" ", folded).strip())


def _normalized(value: Any) -> Any:
    if isinstance(value, str):
        return normalized_text(value)
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalized(v) for v in value]
    return value


def text_key(operation: str, params: dict[str, Any]) -> str:
    """The identity two proposals share when they say the same thing in other spacing or case."""
    return digest({"operation": operation, "params": _normalized(params)})
