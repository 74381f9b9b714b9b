"""The plan block's JSON: strict (no duplicate keys, finite numbers), an object, not too deep."""

from __future__ import annotations

from typing import Any

from custodian_runtime.core.digest import strict_loads
from custodian_runtime.errors import PlanRejected

MAX_DEPTH = 64


def parse_plan_object(text: str) -> dict[str, Any]:
    """The ```json block's text as one JSON object, or PlanRejected saying what to fix."""
    try:
        document = strict_loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise PlanRejected(_too_deep()) from None
    except ValueError as exc:
        raise PlanRejected(
            f"The ```json block is not valid JSON ({exc}): write one JSON object, "
            "with double-quoted keys and strings, finite numbers, and no comments or trailing "
            "commas."
        ) from None
    if not isinstance(document, dict):
        raise PlanRejected(
            f"The ```json block contains a JSON {type(document).__name__}, not an object: "
            'the plan must be one object such as {"observations": [], "progress_events": []}.'
        )
    if _depth(document) > MAX_DEPTH:
        raise PlanRejected(_too_deep())
    return document


def require_unicode(text: str, what: str) -> None:
    """PlanRejected if `text` holds a lone surrogate, which no UTF-8 text can carry."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = f"U+{ord(text[exc.start]):04X}"
        raise PlanRejected(
            f"{what} is not valid Unicode: it contains a lone surrogate ({code}): write the plan "
            "as UTF-8 text, and escape only whole characters "
            "(a pair such as \\ud83d\\ude00, never half of one)."
        ) from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            # json.loads would keep the last one silently; a plan must not hide an entry.
            raise ValueError(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def _too_deep() -> str:
    return (
        f"The ```json block nests deeper than {MAX_DEPTH} levels: "
        "write a flat plan of lists of objects."
    )


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, level + 1) for child in children)
    return deepest
