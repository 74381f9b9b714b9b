"""Every relative link in README.md and docs/*.md reaches a file, and its `#anchor` a heading.

An anchor is a heading's GitHub slug: lower case, punctuation other than `-` and `_` dropped,
spaces as `-`, and `-1`, `-2` … after a slug the document already has. Links inside code (fenced
blocks and `code spans`) are text, not links. The README stays a front door: at most
`README_MOST_LINES` lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from support.paths import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MOST_LINES = 260

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.DOTALL)  # in a paragraph
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, …


def prose(text: str) -> str:
    """`text` with fenced blocks and code spans blanked (newlines kept, so lines still count)."""
    text = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before numbering repeats)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every anchor the document's headings give, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    text = prose_keep_headings(document.read_text(encoding="utf-8"))
    for match in HEADING.finditer(text):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def prose_keep_headings(text: str) -> str:
    """`text` with fenced blocks blanked: a `# comment` in a shell block is no heading."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image outside code."""
    plain = prose(text)
    return [(plain.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(plain)]


def problems(document: Path, root: Path = REPO) -> list[str]:
    """What does not resolve among `document`'s relative links (named relative to `root`)."""
    found = []
    for line, target in links(document.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        where = f"{document.relative_to(root)}:{line} ({target})"
        path, _, anchor = target.partition("#")
        resolved = (document.parent / unquote(path)).resolve() if path else document
        if not resolved.exists():
            found.append(f"{where}: no file {path}")
        elif anchor and resolved.suffix == ".md" and unquote(anchor) not in anchors(resolved):
            found.append(f"{where}: {resolved.name} has no heading #{anchor}")
    return found


def test_every_relative_link_and_anchor_resolves() -> None:
    found = [problem for document in DOCUMENTS for problem in problems(document)]
    assert found == []


def test_every_document_is_reached_from_the_readme() -> None:
    reached, todo = set(), [REPO / "README.md"]
    while todo:
        document = todo.pop()
        if document in reached or document.suffix != ".md" or not document.exists():
            continue
        reached.add(document)
        for _, target in links(document.read_text(encoding="utf-8")):
            path = target.partition("#")[0]
            if path and not EXTERNAL.match(path):
                todo.append((document.parent / unquote(path)).resolve())
    unreached = [str(d.relative_to(REPO)) for d in DOCUMENTS if d.resolve() not in reached]
    assert unreached == []


def test_the_readme_is_a_front_door() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, (
        f"README.md has {len(lines)} lines; move detail to docs/"
    )


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text(
        "# Title\n\n## The review page (`custodian review`)\n\n## Seals\n"
    )
    (tmp_path / "a.md").write_text(
        "[ok](b.md#the-review-page-custodian-review) [ok](b.md#seals) [ok](#here)\n"
        "# Here\n"
        "[gone](c.md) [no anchor](b.md#logs) `[in code](d.md)` [web](https://example.com/x)\n"
        "```sh\n[in a block](e.md)\n# not a heading\n```\n[not a heading](#not-a-heading)\n"
        "a span `over\n[two lines](f.md)` and\n\nan unclosed ` [after](g.md)\n"
    )
    assert problems(tmp_path / "a.md", root=tmp_path) == [
        "a.md:3 (c.md): no file c.md",
        "a.md:3 (b.md#logs): b.md has no heading #logs",
        "a.md:8 (#not-a-heading): a.md has no heading #not-a-heading",
        "a.md:12 (g.md): no file g.md",
    ]


def test_slugs_as_github_makes_them(tmp_path: Path) -> None:
    assert slug("The review page (`custodian review`)") == "the-review-page-custodian-review"
    assert slug("Deciding doesn't wait for a run") == "deciding-doesnt-wait-for-a-run"
    assert slug("Measuring a model and a canon: `custodian eval`") == (
        "measuring-a-model-and-a-canon-custodian-eval"
    )
    (tmp_path / "c.md").write_text("## Logs\n\n## Logs\n")
    assert anchors(tmp_path / "c.md") == {"logs", "logs-1"}
