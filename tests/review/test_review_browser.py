"""The review page in a real headless Chromium: read a note, approve (with its confirmation) and
reject; Enter decides nothing; a write_canon card shows its diff; ten items decided through the
page leave the hub and memory/ exactly as the CLI does; axe-core finds nothing serious.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from support.browser import (
    approve,
    card,
    fill,
    press,
    reject,
    shot,
    wait_for,
)
from support.review import (
    REJECT_REASON,
    chrome,
    hub_state,
    memory_state,
    queue_plan,
    queue_two,
    review_page,
    review_settings,
    screenshot_dir,
)
from support.runs import CANON, run_cli, small_dataset, tree_digest

pytestmark = pytest.mark.slow


def _twin_by_cli(tmp_path: Path, mp: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The same run and decisions through `custodian approvals`, on a hub of its own."""
    db = tmp_path / "twin-hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as hub:
        twin = queue_two(tmp_path / "twin", mp, hub)
        base = ["approvals", "--memory", str(twin.memory)]
        ok = run_cli(
            [*base, "approve", twin.create_id, "--by", "ana", "--hub", hub.url], tmp_path, mp
        )
        assert ok.code == 0, ok.stderr
        no = [*base, "reject", twin.resolve_id, "--by", "ben", "--reason", REJECT_REASON]
        assert run_cli(no, tmp_path, mp).code == 0
        return hub_state(hub), memory_state(twin)


def _read_runs_and_note(driver: Any, url: str, run_id: str, shots: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.get(url)
    wait_for(driver, "section.approval")  # the pending queue is the landing page
    assert "token=" not in driver.current_url  # traded for a cookie
    driver.find_element(By.LINK_TEXT, "Runs").click()
    row = wait_for(driver, f'tr[data-run-id="{run_id}"]')
    assert "queued 2" in row.text
    # The stylesheet loaded under the Content-Security-Policy (style-src 'self').
    body = driver.find_element(By.TAG_NAME, "body")
    assert body.value_of_css_property("background-color") == "rgba(247, 248, 250, 1)"
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.queued")
    shot(driver, shots, "runs")
    row.find_element(By.CSS_SELECTOR, "a.note-link").click()
    note = wait_for(driver, "article.note")
    assert "the sitemap is missing" in note.text
    assert "<script>alert(1)</script>" in note.text  # shown as text, never run
    assert "https://vendor.invalid/pick" in note.text
    assert note.find_elements(By.TAG_NAME, "a") == []
    assert note.find_elements(By.TAG_NAME, "img") == []
    shot(driver, shots, "note")


def test_a_person_reads_a_note_approves_and_rejects_in_a_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    twin_hub, twin_memory = _twin_by_cli(tmp_path, monkeypatch)
    queued = queue_two(tmp_path / "page", monkeypatch, small_hub)
    shots = screenshot_dir(tmp_path)
    driver = chrome(tmp_path / "chrome-profile")
    try:
        with review_page(review_settings(queued.memory, small_hub.url, tmp_path)) as server:
            _read_runs_and_note(driver, server.url, queued.run_id, shots)
            driver.find_element("link text", "Pending approvals 2").click()
            section = card(driver, queued.create_id)
            assert section.find_element("css selector", ".sentence").text == (
                "Create task ‘Add a sitemap’ in workstream web-ws-1 "
                "‘Relaunch the marketing site’ in website"
            )
            assert "Unchanged on the hub since it was proposed." in section.text
            assert "If approved now, the authority rules: would run" in section.text
            section.find_element("css selector", "details.more summary").click()
            assert "The launch needs a sitemap." in section.text
            assert "Add a sitemap" in section.find_element("css selector", "table.fields").text
            approved = approve(driver, queued.create_id, "ana", shots)
            assert approved.startswith("Approved and executed: created task ‘Add a sitemap’")
            # The name is remembered for the session: the run's group has it already.
            by = driver.find_element("css selector", 'form.queue input[name="by"]')
            assert by.get_attribute("value") == "ana"
            rejected = reject(driver, queued.resolve_id, "ben", REJECT_REASON)
            assert rejected.startswith("Rejected by ben: Resolve decision dec-1")
            driver.find_element("link text", "History").click()
            assert "rejected" in wait_for(driver, f'[data-history-id="{queued.resolve_id}"]').text
            shot(driver, shots, "history")
    finally:
        driver.quit()
    assert hub_state(small_hub) == twin_hub
    assert memory_state(queued) == twin_memory
    statuses = {k: v["status"] for k, v in memory_state(queued)["items"].items()}
    assert statuses == {"create": "executed", "resolve": "rejected"}


def test_enter_in_any_field_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    queued = queue_two(tmp_path, monkeypatch, small_hub)
    before = (tree_digest(queued.memory), hub_state(small_hub))
    driver = chrome(tmp_path / "chrome-profile")
    try:
        with review_page(review_settings(queued.memory, small_hub.url, tmp_path)) as server:
            driver.get(server.url)
            section = card(driver, queued.resolve_id)
            fill(section, "reviewer", REJECT_REASON)
            group = driver.find_element(By.CSS_SELECTOR, "form.queue")
            choice = section.find_element(By.CSS_SELECTOR, 'input[value="reject"]')
            choice.send_keys(Keys.SPACE)  # chosen for the group, which only a click decides
            for field in (
                group.find_element(By.CSS_SELECTOR, 'input[name="by"]'),
                section.find_element(By.CSS_SELECTOR, 'textarea[name^="reason"]'),
                group.find_element(By.CSS_SELECTOR, 'input[name="reason"]'),
                choice,
            ):
                field.send_keys(Keys.ENTER)
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided, p.problem") == []
            # The page of selected items to reject: Enter there decides nothing.
            driver.get(f"http://{server.address}/reject-selected?ids={queued.resolve_id}")
            wait_for(driver, f'[data-selected-id="{queued.resolve_id}"]')
            bulk = driver.find_element(By.ID, "bulk-reject")
            fill(bulk, "reviewer")
            bulk.find_element(By.CSS_SELECTOR, 'input[name="reason"]').send_keys("no", Keys.ENTER)
            bulk.find_element(By.CSS_SELECTOR, 'input[name="by"]').send_keys(Keys.ENTER)
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided, p.problem") == []
            driver.find_element(By.LINK_TEXT, "Back to the queue").click()
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided") == []
            # A group's choices ask once; leaving that confirmation decides nothing.
            section = card(driver, queued.resolve_id)
            fill(section, "reviewer", REJECT_REASON)
            section.find_element(By.CSS_SELECTOR, 'input[value="reject"]').click()
            driver.find_element(By.CSS_SELECTOR, 'button[value="choose"]').click()
            wait_for(driver, "[data-confirm-group]")
            driver.find_element(By.LINK_TEXT, "No, back to the queue").click()
            wait_for(driver, "form.queue")
            # An approve click asks; leaving the confirmation decides nothing either.
            fill(card(driver, queued.create_id), "reviewer")
            press(card(driver, queued.create_id), "approve")
            wait_for(driver, f'[data-confirm-approval-id="{queued.create_id}"]')
            driver.find_element(By.LINK_TEXT, "No, back to the queue").click()
            assert len(driver.find_elements(By.CSS_SELECTOR, "section.approval")) == 2
    finally:
        driver.quit()
    assert (tree_digest(queued.memory), hub_state(small_hub)) == before


def test_a_write_canon_card_shows_its_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    from selenium.webdriver.common.by import By

    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    old = (canon / "domains" / "website.md").read_text(encoding="utf-8")
    new = old.replace(old.splitlines()[0], "# Website (relaunched)") + "A new last line.\n"
    write = {"operation": "write_canon", "rationale": "The relaunch changed the site.",
             "params": {"path": "domains/website.md", "content": new}}  # fmt: skip
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, [write], canon)
    (approval_id,) = names
    shots = screenshot_dir(tmp_path)
    driver = chrome(tmp_path / "chrome-profile")
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path, canon)) as server:
            driver.get(server.url)
            section = card(driver, approval_id)
            section.find_element(By.CSS_SELECTOR, "details.diff summary").click()
            added = [e.text for e in section.find_elements(By.CSS_SELECTOR, ".diff-add")]
            removed = [e.text for e in section.find_elements(By.CSS_SELECTOR, ".diff-del")]
            assert "+# Website (relaunched)" in added and "+A new last line." in added
            assert removed == [f"-{old.splitlines()[0]}"]
            shot(driver, shots, "diff")
    finally:
        driver.quit()
