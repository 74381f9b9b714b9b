"""Driving the review page in headless Chromium: waits, screenshots, deciding, axe-core."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runsupport import REPO

AXE = REPO / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_INSTALL = "make setup (it runs: npm ci --prefix .cache/axe, from tests/axe/package-lock.json)"
# axe.run through the driver: the page's CSP forbids inline script, the DevTools protocol is
# not a page script.
AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]}).then(
  r => done(r.violations.map(v => [v.id, v.impact, v.nodes.map(n => n.target.join(" "))])),
  e => done([["axe-error", "critical", [String(e)]]]));
"""


def wait_for(driver: Any, css: str) -> Any:
    """The first element matching `css`, waited for up to 20 s."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def shot(driver: Any, folder: Path, name: str) -> None:
    """Save `review-<name>.png` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"review-{name}.png"
    assert driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def card(driver: Any, approval_id: str) -> Any:
    """The card of one pending item."""
    return wait_for(driver, f'[data-approval-id="{approval_id}"]')


def fill(section: Any, by: str, reason: str = "") -> None:
    """Type the name (replacing a remembered one) and the reason into a card's form."""
    from selenium.webdriver.common.by import By

    field = section.find_element(By.CSS_SELECTOR, 'input[name="by"]')
    field.clear()
    field.send_keys(by)
    if reason:
        section.find_element(By.CSS_SELECTOR, 'textarea[name="reason"]').send_keys(reason)


def press(section: Any, decision: str) -> None:
    """Click a card's approve or reject button."""
    from selenium.webdriver.common.by import By

    section.find_element(By.CSS_SELECTOR, f'button[name="decision"][value="{decision}"]').click()


def approve(driver: Any, approval_id: str, by: str, shots: Path | None = None) -> str:
    """Approve through the confirmation step; the flash sentence that follows."""
    from selenium.webdriver.common.by import By

    section = card(driver, approval_id)
    fill(section, by)
    press(section, "approve")
    confirm = wait_for(driver, f'[data-confirm-approval-id="{approval_id}"]')
    if shots is not None:
        shot(driver, shots, "confirm")
    confirm.find_element(By.CSS_SELECTOR, 'button[name="decision"][value="confirm"]').click()
    text: str = wait_for(driver, f'p.decided[data-decided="{approval_id}"]').text
    return text


def reject(driver: Any, approval_id: str, by: str, reason: str) -> str:
    """Reject one item from its card; the flash sentence that follows."""
    section = card(driver, approval_id)
    fill(section, by, reason)
    press(section, "reject")
    text: str = wait_for(driver, f'p.decided[data-decided="{approval_id}"]').text
    return text


def axe_violations(driver: Any) -> list[Any]:
    """axe-core's serious and critical violations on the page open in `driver`."""
    if not AXE.is_file():
        pytest.fail(f"the accessibility check needs axe-core in .cache/axe: {AXE_INSTALL}")
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    driver.set_script_timeout(60)
    found = driver.execute_async_script(AXE_RUN)
    return [v for v in found if v[1] in ("serious", "critical")]
