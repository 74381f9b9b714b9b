"""A canon larger than the prompt: the index on disk, the sections a prompt shows, and a canon
that fits shown exactly as before."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from custodian_runtime.canon import index as canon_index
from custodian_runtime.canon import retrieve
from custodian_runtime.canon.library import read_canon_dir
from custodian_runtime.canon.retrieve import RunCanon, run_canon
from custodian_runtime.core.context.prompt import PromptInputs
from custodian_runtime.core.context.queries import state_queries
from custodian_runtime.errors import ConfigError
from custodian_runtime.render.prompt import RenderedPrompt, render_prompt
from custodian_runtime.writes import check_canon
from support.context import typical_inputs, typical_summary
from support.runs import CANON

FREEZE = """---
domains: [website, web-*]
---
# Release freeze

## When a task is blocked by the freeze

A blocked launch task waits for the freeze to lift; flag it only after the freeze ends.

## Vendors

Vendors are chosen by the owner.
"""
STYLE = """---
pin: true
---
# House style

Write ids in backticks.
"""
OTHER = """# Payroll

## Payroll blockers

A blocked payroll run is escalated to finance.
"""


def _canon(tmp_path: Path, *extra: tuple[str, str]) -> Path:
    root = tmp_path / "canon"
    shutil.copytree(CANON, root)
    for relative, text in extra:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, "utf-8")
    return root


def _today(canon: Path, domain: str) -> PromptInputs:
    """The prompt's inputs as a run built them before the canon had sections to retrieve."""
    guidance = canon / "domains" / f"{domain}.md"
    return typical_inputs(
        domain=domain,
        constitution=(canon / "constitution.md").read_text("utf-8"),
        domain_guidance=guidance.read_text("utf-8") if guidance.is_file() else None,
    )


def _now(canon: Path, domain: str, memory: Path | None) -> tuple[RenderedPrompt, RunCanon]:
    inputs = _today(canon, domain)
    got = run_canon(canon, domain, state_queries(inputs.summary), memory)
    inputs = replace(
        inputs,
        constitution=got.constitution.text,
        domain_guidance=got.guidance.text if got.guidance else None,
        canon_pinned=got.pinned,
        canon_ranked=got.ranked,
        canon_sections=got.sections,
    )
    return render_prompt(inputs), got


@pytest.mark.parametrize("domain", ["website", "platform", "nowhere"])
def test_a_canon_that_fits_is_shown_byte_for_byte_as_before(tmp_path: Path, domain: str) -> None:
    # Before: the files read as text and given to the renderer, whose output for such inputs
    # tests/support/golden/prompt_*.txt pin as they were before the canon had sections (unchanged).
    before = render_prompt(_today(CANON, domain))
    after, got = _now(CANON, domain, tmp_path / "memory")
    assert (after.system, after.user) == (before.system, before.user)
    assert after.canon == () and got.sections == 0
    assert not (tmp_path / "memory").exists()  # no library, no index


def test_the_sections_that_govern_the_state_are_shown_and_scoped(tmp_path: Path) -> None:
    canon = _canon(
        tmp_path, ("adr/freeze.md", FREEZE), ("style.md", STYLE), ("hr/payroll.md", OTHER)
    )
    rendered, got = _now(canon, "website", tmp_path / "memory")
    assert got.sections == 3  # freeze.md's 2 and payroll's 1 (titles alone are no section)
    assert [f.path for f in got.pinned] == ["style.md"]
    assert "The canon's `style.md` is pinned" in rendered.system
    assert "Write ids in backticks." in rendered.system
    assert "# The canon that bears on this state" in rendered.user
    assert "From `adr/freeze.md`:\n\n## When a task is blocked by the freeze" in rendered.user
    assert any(s.heading == "When a task is blocked by the freeze" for s in rendered.canon)
    assert "domains: [website" not in rendered.user + rendered.system  # front matter is not shown
    # The freeze record is scoped to website and web-*: another domain never sees it.
    _, platform = _now(canon, "platform", tmp_path / "memory")
    assert {s.file for s in platform.ranked} <= {"hr/payroll.md"}
    assert platform.sections == 1


def test_a_run_of_a_canon_with_no_governing_section_says_so(tmp_path: Path) -> None:
    salaries = "# Payroll\n\nKept by finance.\n\n## Salaries\n\nPaid monthly.\n"
    canon = _canon(tmp_path, ("hr/payroll.md", salaries))
    rendered, got = _now(canon, "website", None)
    assert got.ranked == ()
    assert "None of the canon's 2 other sections bears on this state." in rendered.user


def test_the_index_is_kept_by_content_and_an_edit_is_seen_by_the_next_run(tmp_path: Path) -> None:
    canon = _canon(tmp_path, ("adr/freeze.md", FREEZE))
    memory = tmp_path / "memory"
    first, _ = _now(canon, "website", memory)
    (kept,) = (memory / "index").glob("canon-*.sqlite")
    assert "flag it only after the freeze ends" in first.user
    again, _ = _now(canon, "website", memory)  # read from the kept index
    assert again == first
    edited = FREEZE.replace("flag it only after the freeze ends", "flag it on the first day")
    (canon / "adr" / "freeze.md").write_text(edited, "utf-8")
    after, got = _now(canon, "website", memory)
    assert "flag it on the first day" in after.user
    assert "flag it only after the freeze ends" not in after.user
    (replaced,) = (memory / "index").glob("canon-*.sqlite")
    assert replaced != kept  # a new name for new content; the old one is gone
    shown = next(s for s in got.ranked if s.heading.startswith("When a task is blocked"))
    assert "flag it on the first day" in shown.text


def test_a_damaged_or_unwritable_index_is_built_again(tmp_path: Path) -> None:
    canon = _canon(tmp_path, ("adr/freeze.md", FREEZE))
    memory = tmp_path / "memory"
    first, _ = _now(canon, "website", memory)
    (kept,) = (memory / "index").glob("canon-*.sqlite")
    kept.write_bytes(b"not a database")
    assert _now(canon, "website", memory)[0] == first
    with sqlite3.connect(kept) as connection:  # rebuilt and kept again
        assert connection.execute("SELECT count(*) FROM sections").fetchone() == (2,)
    blocked = tmp_path / "a-file"
    blocked.write_text("", "utf-8")  # a memory directory that cannot hold the index
    assert _now(canon, "website", blocked)[0] == first


def test_a_python_without_fts5_is_told_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canon = _canon(tmp_path, ("adr/freeze.md", FREEZE))
    schema = ("CREATE VIRTUAL TABLE sections USING no_such_fts(body)", *canon_index._SCHEMA[1:])
    monkeypatch.setattr(canon_index, "_SCHEMA", schema)
    with pytest.raises(ConfigError) as caught:
        _now(canon, "website", None)
    assert "has no FTS5" in str(caught.value)
    assert "a Python whose SQLite has FTS5" in str(caught.value)
    with pytest.raises(ConfigError, match="has no FTS5"):
        check_canon(canon)  # said before a run reads the hub
    check_canon(CANON)
    assert _now(CANON, "website", None)[1].sections == 0  # a canon without a library still runs


def test_this_python_has_fts5() -> None:
    options = {row[0] for row in sqlite3.connect(":memory:").execute("PRAGMA compile_options")}
    assert "ENABLE_FTS5" in options


def test_a_canon_file_is_read_as_text_mode_reads_it(tmp_path: Path) -> None:
    root = tmp_path / "canon"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "x.md").write_text("# not canon", "utf-8")
    (root / ".draft.md").write_text("# not canon", "utf-8")
    (root / "constitution.md").write_bytes(b"# Law\r\n\r\nOne rule.\r\n")
    canon = read_canon_dir(root)
    assert list(canon.files) == ["constitution.md"]
    assert canon.constitution.text == "# Law\n\nOne rule.\n"
    assert canon.library_key is None
    assert typical_summary().domain == "website"


def test_another_domains_records_never_fill_a_querys_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strong = "---\ndomains: [platform]\n---\n## Sign-off blocked\n\nBlocked sign-off, blocked.\n"
    canon = _canon(
        tmp_path,
        ("platform/signoff.md", strong),
        ("shared/signoff.md", "## Sign-off\n\nA sign-off waits for its owner.\n"),
    )
    monkeypatch.setattr(retrieve, "ROWS", 1)  # one row a query: the best match in scope
    got = run_canon(canon, "website", (("blocked", "sign"),), None)
    assert [s.file for s in got.ranked] == ["shared/signoff.md"]
    assert [s.file for s in run_canon(canon, "platform", (("blocked",),), None).ranked] == [
        "platform/signoff.md"
    ]
