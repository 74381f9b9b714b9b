"""The approval queue as a person reads it: `approvals list` and `approvals show ID`.

Every value may hold model or hub text, so every line is terminal-inert and no line is longer
than `WIDTH` columns in the list; `show` prints every field in full, one labelled line each.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.presentation.display import (
    LONG_PAIR,
    WIDTH,
    age,
    columns,
    fit,
    one_line,
    params_line,
)

_INDENT = "    "
_LABEL_COLUMNS = 15


def list_lines(item: ApprovalItem, status: str, now: datetime, width: int = WIDTH) -> list[str]:
    """Two lines: id, status, age, domain, operation and every param; then the rationale."""
    params = params_line(_listed_order(item))
    head = (
        f"{one_line(item.id)}  {one_line(status):8} {age(now - item.created_at):>4}  "
        f"{one_line(item.domain)}  {one_line(item.operation)}  {params}"
    )
    rationale = one_line(item.rationale) if item.rationale else "(no rationale given)"
    return [fit(head, width), _with_waits(_INDENT + rationale, item, status, width)]


def _with_waits(line: str, item: ApprovalItem, status: str, width: int) -> str:
    """The rationale's line, and the kind of reason a pending item waits for where there is
    room (`· waits: approvable`; `show` says it in full); a decided item waits for nothing."""
    waits = item.waiting_because if status == "pending" else None
    tagged = line if waits is None else f"{line}  · waits: {one_line(waits.code)}"
    return tagged if columns(tagged) <= width else fit(line, width)


def _listed_order(item: ApprovalItem) -> dict[str, Any]:
    """The params with what the item is about first (its spec's `targets`), then what it says
    (the long values), then the rest: a cut at the line's end takes a short param's tail, not
    all of a create's title."""
    spec = operations.find(item.operation)
    targets = spec.targets if spec is not None else ()
    first = {k: v for k, v in item.params.items() if k in targets}
    rest = {k: v for k, v in item.params.items() if k not in targets}
    long = {k: v for k, v in rest.items() if len(params_line({k: v})) > LONG_PAIR}
    return {**first, **long, **rest}


def show_text(item: ApprovalItem, status: str, now: datetime, seal_problem: str | None) -> str:
    """Every field of one item, labelled; params one per line; dates with their ages."""
    lines = [
        f"{one_line(item.id)}: {one_line(item.operation)} ({one_line(status)})",
        _field("domain", item.domain),
        _field("status", status),
        *_wrapped("fate", fate(item, status)),
        *_waits(item),
        _field("operation", item.operation),
        "params:",
        *_block(item.params, "(none)"),
        *_wrapped("rationale", item.rationale or "(none given)"),
        _field("proposed by", f"run {item.run_id}"),
        "precondition:",
        *_block(item.precondition, "(none: nothing to compare when it is approved)"),
        _field("created", _when(item.created_at, now)),
        _field("expires", _when(item.expires_at, now)),
        _field("fingerprint", item.fingerprint),
    ]
    lines += _decision(item, now)
    if seal_problem is not None:
        lines.append(_field("seal", seal_problem))
    return "\n".join(lines) + "\n"


def _waits(item: ApprovalItem) -> list[str]:
    """Why it waits, in one line; an item queued before that was kept says what it kept then
    (why the authority queued it, for a reason of its own), and an older one nothing."""
    if item.waiting_because is not None:
        return _wrapped("waits because", item.waiting_because.text)
    if item.waits is None:
        return []
    text = item.waits
    if item.waits_code == "deferred":
        text = f"in deference to a person's change: {text}"
    return _wrapped("waits", text)


def _decision(item: ApprovalItem, now: datetime) -> list[str]:
    lines = []
    if item.decided_at is not None:
        lines.append(_field("decided", _when(item.decided_at, now)))
    optional = (
        ("decided by", item.decided_by),
        ("decision note", item.decision_note),
        ("reject reason", item.reject_reason),
    )
    lines += [_field(label, value) for label, value in optional if value is not None]
    if item.result is not None:
        lines += ["result:", *_block(_result_shown(item.result), "(empty)")]
    return lines


def _result_shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result as `show` prints it: a canon file's text before the write is counted, not
    printed (the diff is on the item's page, the text in `--json`)."""
    before = result.get("before")
    if not isinstance(before, str):
        return dict(result)
    kept = f"{len(before.splitlines())} lines (the file before the write; in --json)"
    return {**result, "before": kept if before else "(no file: a new one)"}


def _wrapped(label: str, text: str) -> list[str]:
    """A long text over several lines of at most WIDTH columns, under its label."""
    lines = textwrap.wrap(one_line(text), WIDTH - _LABEL_COLUMNS) or [""]
    return [f"{label + ':':{_LABEL_COLUMNS}}{lines[0]}"] + [
        " " * _LABEL_COLUMNS + x for x in lines[1:]
    ]


def _field(label: str, value: Any) -> str:
    return f"{label + ':':{_LABEL_COLUMNS}}{one_line(value)}"


def _block(values: Mapping[str, Any], empty: str) -> list[str]:
    """One indented `key: value` line per entry; a multi-line text keeps its lines, indented."""
    if not values:
        return [f"  {empty}"]
    lines = []
    for key, value in values.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"  {one_line(key)}: |")
            lines += [_INDENT + one_line(part) for part in value.split("\n")]
        elif isinstance(value, Mapping):
            lines.append(f"  {one_line(key)}: {params_line(value)}")
        else:
            lines.append(f"  {one_line(key)}: {one_line(value)}")
    return lines


def _when(moment: datetime, now: datetime) -> str:
    stamp = moment.strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{stamp} (in {age(moment - now)})"
        if moment > now
        else f"{stamp} ({age(now - moment)} ago)"
    )


def fate(item: ApprovalItem, status: str) -> str:
    """What became of a queued item, in one sentence: executed, rejected, expired, and so on."""
    who = f"{one_line(item.decided_by or 'a person')}"
    when = item.decided_at.strftime(" on %Y-%m-%d %H:%M UTC") if item.decided_at else ""
    answer = answer_words(item.result)
    reason = item.reject_reason or "no reason"
    sentences = {
        "pending": f"Waiting for a person until {item.expires_at:%Y-%m-%d %H:%M UTC}.",
        "expired": f"Expired on {item.expires_at:%Y-%m-%d %H:%M UTC} without a decision.",
        "rejected": f"Rejected by {who}{when}: {one_line(reason).rstrip('.')}.",
        "executed": f"Approved by {who}{when} and executed; {answered(item)}.",
        "stale": f"Approved by {who}{when}, but the target had changed: nothing ran.",
        "failed": f"Approved by {who}{when}, but it was not carried out: {answer}.",
        "unknown": f"Approved by {who}{when}; no answer came, the next run settles it.",
        "approved": f"Approved by {who}{when}; being carried out.",
    }
    return sentences.get(status, f"{one_line(status)}.")


def answered(item: ApprovalItem) -> str:
    """What an executed item's write came to, by what its operation writes (its spec's
    `writes`): `the canon file domains/x.md was written`, or `the hub answered hub id t-9`."""
    spec = operations.find(item.operation)
    result = item.result or {}
    if spec is not None and spec.writes == "canon":
        path = one_line(result.get("path") or item.params.get("path"))
        return f"the canon file {path} was written{_lines_changed(item)}"
    return f"the hub answered {answer_words(result)}"


def _lines_changed(item: ApprovalItem) -> str:
    """` (12 lines, it had 10)`, from the content before that the item's result keeps."""
    before = (item.result or {}).get("before")
    now = len(str(item.params.get("content", "")).splitlines())
    if not isinstance(before, str):
        return f" ({now} lines)"
    if not before:
        return f" ({now} lines, a new file)"
    return f" ({now} lines, it had {len(before.splitlines())})"


def answer_words(result: Mapping[str, Any] | None) -> str:
    """A write's result as words: `hub_id web-t-09`, or `nothing` when there is none."""
    if not result:
        return "nothing"
    return ", ".join(
        f"{one_line(k).replace('_', ' ')} {one_line(v, 200)}" for k, v in result.items()
    )
