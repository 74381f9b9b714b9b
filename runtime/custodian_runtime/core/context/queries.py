"""What a run asks of the canon: one query per thing in the domain's state that a rule may govern.

Flags, blocked tasks, open decisions, the operations waiting for a person (or rejected), tasks in
progress, then tasks to do and workstreams: each becomes one query of its own words and of the
words that name its kind (`blocked`, `flag`, `decision`, the operation's name), so that a section
about blockers is found for a blocked task whatever its title. Each query is a bag of terms:
lower-case words of three letters or more that are not common English.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from custodian_runtime.core.context.prompt import ApprovalBrief
from custodian_runtime.core.contract import DomainSummary

__all__ = ["MAX_QUERIES", "MAX_TERMS", "state_queries", "terms"]

# Each costs a lookup (about half a millisecond at 600 sections), and the first ones are what a
# person would look at first: the best sections of 24 queries fill the default share (6,000
# tokens) already. With 60 tasks to do, 64 queries showed fewer of the sections that must be
# shown than 24 or 32 did (0.964, 0.982, 0.979), in more time.
MAX_QUERIES = 24
MAX_TERMS = 24  # per query: a long description adds little after its first words
_WORD = re.compile(r"[a-z0-9]+")
_COMMON = frozenset(
    _WORD.findall(
        """
    about above after again all also and any are been before being below between both but can
    could did does doing done down during each few for from further had has have having her
    here hers him his how into its itself just more most must not now off once only other our
    out over own same she should some such than that the their them then there these they this
    those through too under until very was were what when where which while who whom why will
    with would you your yet per via let get got use used new one two
        """
    )
)


def terms(text: str) -> tuple[str, ...]:
    """The distinct words of `text` a query uses, in order, at most MAX_TERMS."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) >= 3 and word not in _COMMON and not word.isdigit():
            seen.setdefault(word, None)
    return tuple(seen)[:MAX_TERMS]


def state_queries(
    summary: DomainSummary,
    pending: Sequence[ApprovalBrief] = (),
    rejected: Sequence[ApprovalBrief] = (),
) -> tuple[tuple[str, ...], ...]:
    """The run's queries, most pressing first, each a tuple of terms; empty ones left out."""
    tasks = [t for ws in summary.workstreams for t in ws.tasks]
    texts: list[str] = [f"flag {f.note}" for f in summary.open_flags]
    texts += [f"blocked blocker {t.title} {t.description}" for t in tasks if t.status == "blocked"]
    texts += [
        f"decision {d.title} {d.context} {' '.join(d.options)}" for d in summary.open_decisions
    ]
    texts += [_approval(a) for a in (*pending, *rejected)]
    texts += [f"progress {t.title} {t.description}" for t in tasks if t.status == "in_progress"]
    texts += [f"{t.title} {t.description}" for t in tasks if t.status == "todo"]
    texts += [ws.title for ws in summary.workstreams]
    return _distinct(terms(text) for text in texts)


def _approval(brief: ApprovalBrief) -> str:
    return f"{brief.operation.replace('_', ' ')} {brief.summary} {brief.reason or ''}"


def _distinct(queries: Iterable[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    found: dict[tuple[str, ...], None] = {}
    for query in queries:
        if query:
            found.setdefault(query, None)
    return tuple(found)[:MAX_QUERIES]
