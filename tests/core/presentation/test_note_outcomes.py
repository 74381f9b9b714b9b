"""A note read later says what became of each item its run queued (executed, rejected and why,
expired), from the journal; once none waits, nothing calls them queued. The note file itself
stays as its run wrote it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.presentation.note_outcomes import Became, queued_ids, with_outcomes
from support.paths import SUPPORT
from support.review import TEN, Browser, queue_plan, review_page, review_settings
from support.runs import run_cli

GOLDEN = SUPPORT / "golden" / "note.md"


def test_a_queued_section_says_what_each_item_became_and_its_heading_follows() -> None:
    note = GOLDEN.read_text(encoding="utf-8")
    assert queued_ids(note) == ["apr-1a2b3c4d5e6f"]
    waiting = with_outcomes(note, {"apr-1a2b3c4d5e6f": Became("pending", "Waiting.")})
    assert "### Queued for a person's approval (1): 1 still waiting" in waiting
    gone = with_outcomes(note, {"apr-1a2b3c4d5e6f": Became("expired", "Expired on 2026-01-15.")})
    assert "Queued for a person" not in gone
    assert "### Put to a person (1), all since decided or expired: 1 expired" in gone
    lines = gone.split("\n")
    at = next(n for n, line in enumerate(lines) if "approval `apr-1a2b3c4d5e6f`" in line)
    # Under the item's own lines, a paragraph of its list entry; the next section untouched.
    assert lines[at + 1 : at + 4] == [
        "  **Rationale:** Search console reports the sitemap missing (ev-2).", "",
        "  **Became:** expired: Expired on 2026-01-15.",
    ]  # fmt: skip
    assert (
        gone.replace("\n\n  **Became:** expired: Expired on 2026-01-15.", "").replace(
            "### Put to a person (1), all since decided or expired: 1 expired",
            "### Queued for a person's approval (1)",
        )
        == note
    )
    # A person's words are inert in the note too: no heading, no line break.
    forged = Became("rejected", "Rejected by ana: no.\n## Approved everything")
    said = with_outcomes(note, {"apr-1a2b3c4d5e6f": forged})
    assert "\n## Approved everything" not in said


def test_the_note_page_says_what_became_of_each_item_from_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:3])
    sitemap, redirect, alt = [
        next(i for i, n in names.items() if s in n) for s in ("sitemap", "Redirect", "alt texts")
    ]
    (note_file,) = (memory / "working").glob("*.md")
    written = note_file.read_text(encoding="utf-8")
    base = ["approvals", "--memory", str(memory)]
    yes = [*base, "approve", sitemap, "--by", "ana", "--hub", small_hub.url]
    assert run_cli(yes, tmp_path, monkeypatch).code == 0
    no = [*base, "reject", redirect, "--by", "ben", "--reason", "Old links are gone anyway."]
    assert run_cli(no, tmp_path, monkeypatch).code == 0
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        partly = page.get(f"/notes/{note_file.name}").text
        assert "Queued for a person's approval (3): 1 executed, 1 rejected, 1 still waiting" in (
            partly
        )
        assert re.search(
            r"<strong>Became:</strong> rejected: Rejected by ben on [0-9 :-]+ UTC: Old links",
            partly,
        )
        assert "<strong>Became:</strong> executed: Approved by ana on " in partly
        assert "<strong>Now:</strong> Waiting for a person until " in partly
        last = [*base, "reject", alt, "--by", "ben", "--reason", "Later."]
        assert run_cli(last, tmp_path, monkeypatch).code == 0
        done = page.get(f"/notes/{note_file.name}").text
    assert "Queued for a person" not in done
    assert "Put to a person (3), all since decided or expired: 1 executed, 2 rejected" in done
    assert note_file.read_text(encoding="utf-8") == written  # the run's note, as it wrote it


def _new_note(memory: Path, before: set[Path]) -> str:
    (path,) = set((memory / "working").glob("*.md")) - before
    return path.read_text(encoding="utf-8")


def test_the_next_runs_note_says_what_became_of_the_items_the_last_one_left_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:3])
    sitemap, redirect, alt = [
        next(i for i, n in names.items() if s in n) for s in ("sitemap", "Redirect", "alt texts")
    ]
    base = ["approvals", "--memory", str(memory)]
    yes = [*base, "approve", sitemap, "--by", "ana", "--hub", small_hub.url]
    assert run_cli(yes, tmp_path, monkeypatch).code == 0
    no = [*base, "reject", redirect, "--by", "ben", "--reason", "Old links are gone anyway."]
    assert run_cli(no, tmp_path, monkeypatch).code == 0
    before = set((memory / "working").glob("*.md"))
    queue_plan(tmp_path, monkeypatch, small_hub, [], force=True)
    second = _new_note(memory, before)
    assert "## What became of items queued before" in second
    assert re.search(f"approval `{sitemap}`: \\*\\*executed\\*\\*: Approved by ana on ", second)
    assert re.search(
        f"approval `{redirect}`: \\*\\*rejected\\*\\*: Rejected by ben on [0-9 :-]+ UTC: Old links",
        second,
    )
    assert f'waiting: ["{alt}"]' in second and f"`{alt}`:" not in second  # carried, unsaid
    # Decided after the second run: the third run's note says so, and carries nothing more.
    last = [*base, "reject", alt, "--by", "ben", "--reason", "Later."]
    assert run_cli(last, tmp_path, monkeypatch).code == 0
    before = set((memory / "working").glob("*.md"))
    queue_plan(tmp_path, monkeypatch, small_hub, [], force=True)
    third = _new_note(memory, before)
    assert re.search(f"approval `{alt}`: \\*\\*rejected\\*\\*: Rejected by ben on ", third)
    assert f"`{sitemap}`" not in third and "waiting: []" in third
