"""The review page in a real headless Chromium: read a note, approve one item, reject another.

The hub and memory/ must end up exactly as the same decisions through the CLI leave a twin
setup (same seed, same model answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from reviewsupport import (
    REJECT_REASON,
    chrome,
    hub_state,
    memory_state,
    queue_two,
    review_page,
    review_settings,
    screenshot_dir,
)
from runsupport import run_cli, small_dataset

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


def _wait_for(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def _shot(driver: Any, folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"review-{name}.png"
    assert driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _read_runs_and_note(driver: Any, url: str, run_id: str, shots: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.get(url)
    row = _wait_for(driver, f'tr[data-run-id="{run_id}"]')
    assert "queued 2" in row.text
    # The stylesheet loaded under the Content-Security-Policy (style-src 'self').
    body = driver.find_element(By.TAG_NAME, "body")
    assert body.value_of_css_property("background-color") == "rgba(247, 248, 250, 1)"
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.queued")
    assert "token=" not in driver.current_url  # traded for a cookie
    _shot(driver, shots, "runs")
    row.find_element(By.CSS_SELECTOR, "a.note-link").click()
    note = _wait_for(driver, "article.note")
    assert "the sitemap is missing" in note.text
    assert "<script>alert(1)</script>" in note.text  # shown as text, never run
    assert "https://vendor.invalid/pick" in note.text
    assert note.find_elements(By.TAG_NAME, "a") == []
    assert note.find_elements(By.TAG_NAME, "img") == []
    _shot(driver, shots, "note")


def _decide(driver: Any, approval_id: str, decision: str, by: str, reason: str = "") -> str:
    from selenium.webdriver.common.by import By

    section = _wait_for(driver, f'[data-approval-id="{approval_id}"]')
    section.find_element(By.CSS_SELECTOR, 'input[name="by"]').send_keys(by)
    if reason:
        section.find_element(By.CSS_SELECTOR, 'textarea[name="reason"]').send_keys(reason)
    section.find_element(By.CSS_SELECTOR, f'button[name="decision"][value="{decision}"]').click()
    text: str = _wait_for(driver, f'p.decided[data-decided="{approval_id}"]').text
    return text


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
            driver.find_element("link text", "Pending approvals").click()
            section = _wait_for(driver, f'[data-approval-id="{queued.create_id}"]')
            assert "The launch needs a sitemap." in section.text
            assert "Unchanged since it was proposed." in section.text
            assert "If approved now, the authority rules: would run" in section.text
            assert '"Add a sitemap"' in section.text
            _shot(driver, shots, "approvals")
            approved = _decide(driver, queued.create_id, "approve", "ana")
            assert "executed" in approved
            rejected = _decide(driver, queued.resolve_id, "reject", "ben", REJECT_REASON)
            assert "rejected by ben" in rejected
    finally:
        driver.quit()
    assert hub_state(small_hub) == twin_hub
    assert memory_state(queued) == twin_memory
    statuses = {k: v["status"] for k, v in memory_state(queued)["items"].items()}
    assert statuses == {"create": "executed", "resolve": "rejected"}
