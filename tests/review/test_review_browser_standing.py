"""The Standing page in headless Chromium: Enter in the issue and revoke forms changes nothing, a
grant is issued and revoked only through its confirmation, and axe-core finds nothing serious."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from support.browser import axe_violations, shot, wait_for
from support.review import agreed, chrome, review_page, review_settings, screenshot_dir
from support.runs import run_cli, tree_digest

pytestmark = pytest.mark.slow


def _grants(memory: Path, tmp_path: Path, mp: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    listed = run_cli(["grants", "list", "--json", "--memory", str(memory)], tmp_path, mp)
    assert listed.code == 0, listed.stderr
    return list(json.loads(listed.stdout))


def _enter_everywhere(driver: Any, form: Any, names: tuple[str, ...]) -> None:
    """Press Enter in each named field of `form`: implicit submission must do nothing."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, flashes = driver.current_url, len(driver.find_elements(By.CSS_SELECTOR, "p.decided"))
    for name in names:
        form.find_element(By.CSS_SELECTOR, f'[name="{name}"]').send_keys(Keys.ENTER)
    assert driver.current_url == url
    assert driver.find_elements(By.CSS_SELECTOR, "[data-confirm-grant], p.problem") == []
    assert len(driver.find_elements(By.CSS_SELECTOR, "p.decided")) == flashes


def _type(form: Any, **values: str) -> None:
    from selenium.webdriver.common.by import By

    for name, value in values.items():
        field = form.find_element(By.CSS_SELECTOR, f'[name="{name}"]')
        field.clear()
        field.send_keys(value)


def test_enter_issues_and_revokes_nothing_and_the_confirmation_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    from selenium.webdriver.common.by import By

    memory = agreed(tmp_path, monkeypatch, small_hub)
    shots = screenshot_dir(tmp_path)
    driver = chrome(tmp_path / "chrome-profile")
    found = {}
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            driver.get(server.url)
            driver.find_element(By.LINK_TEXT, "Standing").click()
            issue = wait_for(driver, 'form[data-issue-operation="create_task"]')
            before = tree_digest(memory)
            _type(issue, by="ana", reason="ten of ten approved")
            _enter_everywhere(driver, issue, ("by", "reason", "max", "expires", "where"))
            assert tree_digest(memory) == before and _grants(memory, tmp_path, monkeypatch) == []
            found["standing"] = axe_violations(driver)
            issue.find_element(By.CSS_SELECTOR, 'button[value="issue"]').click()
            confirm = wait_for(driver, '[data-confirm-grant="issue"]')
            assert _grants(memory, tmp_path, monkeypatch) == []
            assert driver.find_element(By.CSS_SELECTOR, ".sentence-big").text.startswith(
                "Let Custodian create tasks (create_task) in website without a card, "
                "where status=todo and workstream_id=web-ws-1, at most 10"  # as the hub holds it
            )
            found["confirm"] = axe_violations(driver)
            confirm.find_element(By.CSS_SELECTOR, 'button[value="confirm"]').click()
            flash = wait_for(driver, "p.decided.ok").text
            [grant] = _grants(memory, tmp_path, monkeypatch)
            assert flash.startswith(f"Issued {grant['id']}: Let Custodian create tasks")
            row = wait_for(driver, f'tr[data-grant-id="{grant["id"]}"]')
            assert "0 / 10" in row.text and "live" in row.text
            driver.execute_script("window.scrollTo(0, 0)")
            shot(driver, shots, "standing")
            revoke = driver.find_element(By.CSS_SELECTOR, f'[data-revoke-grant="{grant["id"]}"]')
            driver.find_element(By.CSS_SELECTOR, "tr.revoke details summary").click()
            before = tree_digest(memory)
            _type(revoke, by="bo", reason="too broad")
            _enter_everywhere(driver, revoke, ("by", "reason"))
            assert tree_digest(memory) == before
            found["revoke"] = axe_violations(driver)
            revoke.find_element(By.CSS_SELECTOR, 'button[value="revoke"]').click()
            wait_for(driver, '[data-confirm-grant="revoke"]')
            assert _grants(memory, tmp_path, monkeypatch)[0]["state"] == "live"
            driver.find_element(By.CSS_SELECTOR, 'button[value="confirm"]').click()
            assert wait_for(driver, "p.decided.ok").text.startswith(f"Revoked: {grant['id']}")
    finally:
        driver.quit()
    assert _grants(memory, tmp_path, monkeypatch)[0]["state"] == "revoked"
    assert {page: v for page, v in found.items() if v} == {}
