"""The canon's pure half: front matter, roles, scopes, sections, queries, the merge, the fit."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from custodian_runtime.core.canon.sections import (
    CanonFile,
    CanonSection,
    entry,
    in_scope,
    is_library,
    parse_file,
    pinned_for,
    split,
    title,
)
from custodian_runtime.core.context.choose import fit, fuse, share
from custodian_runtime.core.context.prompt import ApprovalBrief
from custodian_runtime.core.context.queries import state_queries, terms
from custodian_runtime.core.context.tokens import estimate_tokens
from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    Task,
    WorkstreamWithTasks,
)
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.errors import ConfigError
from support.paths import REPO

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
RECORD = """# Release freeze

Why we freeze.

## When work is blocked

Name the blocker.

```sh
## not a heading inside a fence
```

## Decisions

Record the options.

##

## Empty follows
"""


def test_a_file_without_front_matter_is_its_text_unchanged() -> None:
    text = "# Constitution\n\n---\nnot front matter: a rule in the middle\n"
    assert parse_file("constitution.md", text) == CanonFile("constitution.md", text)


@pytest.mark.parametrize(
    ("front", "pin", "domains"),
    [
        ("pin: true", True, None),
        ("pin: no\ndomains: [platform, 'web-*']", False, ("platform", "web-*")),
        ("domains:\n  - platform\n  - ops-?\n# a comment", False, ("platform", "ops-?")),
        ("domains: website", False, ("website",)),
    ],
)
def test_front_matter_pins_a_file_or_scopes_it_by_glob(
    front: str, pin: bool, domains: tuple[str, ...] | None
) -> None:
    parsed = parse_file("adr/1.md", f"---\n{front}\n---\n\n# Title\n")
    assert (parsed.pin, parsed.domains, parsed.text) == (pin, domains, "# Title\n")


@pytest.mark.parametrize(
    ("front", "said"),
    [
        ("pinned: true", "line 2: 'pinned: true' is not one of"),
        ("domain: web", "line 2: 'domain: web' is not one of"),
        ("domains: [a]\n  - b", "does not continue `domains:`"),
        ("pin: maybe", "`pin: maybe` is neither true nor false"),
        ("pin: true\npin: false", "line 3"),
        ("domains: []", "`domains` needs names or globs"),
        ("domains: [web site]", "`domains` needs names or globs"),
    ],
)
def test_wrong_front_matter_is_refused_naming_the_file_and_the_fix(front: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_file("adr/1.md", f"---\n{front}\n---\nbody\n")
    assert "canon file adr/1.md" in str(caught.value)
    assert said in str(caught.value)
    assert "reads `pin: true` and `domains: [glob, ...]` from the front matter" in str(caught.value)


def test_the_front_matter_docs_canon_md_shows_is_read_as_it_says() -> None:
    page = (REPO / "docs" / "canon.md").read_text("utf-8")
    example = page.split("```markdown\n", 1)[1].split("```", 1)[0]
    parsed = parse_file("adr/freeze.md", example)
    assert (parsed.pin, parsed.domains) == (True, ("platform", "web-*"))
    assert parsed.text.startswith("# Release freeze\n")


def test_front_matter_never_closed_is_refused() -> None:
    with pytest.raises(ConfigError, match="never closed"):
        parse_file("adr/1.md", "---\npin: true\n# Title\n")


def test_a_file_splits_at_its_level_two_headings_outside_fences() -> None:
    sections = split(CanonFile("adr/freeze.md", RECORD))
    assert [(s.heading, s.order) for s in sections] == [
        ("Release freeze", 0),
        ("When work is blocked", 1),
        ("Decisions", 2),
        ("Empty follows", 3),
    ]
    blocked = sections[1]
    assert blocked.text.startswith("## When work is blocked\n\nName the blocker.")
    assert "## not a heading inside a fence" in blocked.text
    assert blocked.sha256 == sha256_hex(blocked.text)
    assert blocked.key == ("adr/freeze.md", 1)
    assert title(CanonFile("adr/x.md", "no title\n")) == "adr/x.md"


def test_roles_the_constitution_and_guidance_are_never_library() -> None:
    assert not is_library("constitution.md")
    assert not is_library("domains/website.md")
    assert is_library("domains/shared/style.md")
    assert is_library("adr/0001.md")
    files = [
        CanonFile("adr/a.md", "# A", pin=True),
        CanonFile("adr/b.md", "# B", pin=True, domains=("web*",)),
        CanonFile("adr/c.md", "# C", domains=("platform",)),
        CanonFile("constitution.md", "# K", pin=True),
    ]
    assert [f.path for f in pinned_for(files, "website")] == ["adr/a.md", "adr/b.md"]
    assert [f.path for f in pinned_for(files, "platform")] == ["adr/a.md"]
    assert [f.path for f in files if in_scope(f, "platform")] == ["adr/c.md"]
    assert [f.path for f in files if in_scope(f, "website")] == []


def test_rankings_merge_in_turns_within_the_scope() -> None:
    a, b, c, d = ("x.md", 0), ("x.md", 1), ("y.md", 0), ("z.md", 0)
    merged = fuse([[a, b, c], [d, c, a], [b]], {"x.md", "y.md"}, depth=2)
    # Every query's best first (z.md is out of scope: the second query's best is y.md's).
    assert merged == (a, c, b)
    assert fuse([[a, b, c]], {"x.md", "y.md"}, depth=1) == (a,)


def _section(file: str, order: int, words: int) -> CanonSection:
    text = f"## S{order}\n\n" + " ".join(["rule"] * words)
    return CanonSection(file, f"S{order}", text, sha256_hex(text), order)


def test_the_fit_takes_whole_sections_in_rank_order_and_shows_them_in_canon_order() -> None:
    big, small, other = _section("b.md", 1, 400), _section("a.md", 2, 10), _section("a.md", 0, 10)
    cost = estimate_tokens(entry(small) + "\n")
    fitted = fit([big, small, other], room=2 * cost + 1, candidates=10)
    assert fitted.shown == (other, small)  # the big one does not fit; canon order after
    assert fitted.left_out == 8
    assert 0 < fitted.tokens <= 2 * cost + 1
    assert fit([big], room=0, candidates=1).shown == ()
    assert share(24000, 25) == 6000


def test_terms_drop_common_words_numbers_and_repeats() -> None:
    assert terms("The TLS certificate for the CDN is blocked, blocked since 2026 by us") == (
        "tls",
        "certificate",
        "cdn",
        "blocked",
        "since",
    )


def test_queries_put_flags_blockers_decisions_and_queued_operations_first() -> None:
    def task(tid: str, status: str, title: str) -> Task:
        return Task(
            id=tid, workstream_id="w", title=title, status=status,
            created_at=NOW, updated_at=NOW,
        )  # fmt: skip

    summary = DomainSummary(
        domain="ops", generated_at=NOW,
        workstreams=(WorkstreamWithTasks(
            id="w", domain="ops", title="Operations", status="active", created_at=NOW,
            updated_at=NOW, tasks=(task("t1", "todo", "Write docs"),
                                   task("t2", "blocked", "Renew certificates"),
                                   task("t3", "in_progress", "Rotate keys"))),),
        open_decisions=(Decision(id="d", domain="ops", title="Pick a vendor", status="open",
                                 options=("acme",), created_at=NOW),),
        open_flags=(Flag(id="f", workstream_id="w", note="backups failing", status="open",
                         raised_by="ana", created_at=NOW),),
    )  # fmt: skip
    pending = ApprovalBrief("a1", "create_task", "w", "title=Audit access", "pending", None)
    assert state_queries(summary, (pending,)) == (
        ("flag", "backups", "failing"),
        ("blocked", "blocker", "renew", "certificates"),
        ("decision", "pick", "vendor", "acme"),
        ("create", "task", "title", "audit", "access"),
        ("progress", "rotate", "keys"),
        ("write", "docs"),
        ("operations",),
    )


def test_another_tools_front_matter_is_left_as_it_is() -> None:
    front = (
        "title: Freeze\nstatus: accepted\ntags:\n  - release\n  - web\npin: true\nmodes:\n  a: b"
    )
    parsed = parse_file("adr/2.md", f"---\n{front}\n---\n# Freeze\n")
    assert (parsed.pin, parsed.domains, parsed.text) == (True, None, "# Freeze\n")
