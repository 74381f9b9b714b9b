"""The queue on a phone and on a laptop, in the light and the dark scheme, in headless Chromium:
no sideways scroll, every control inside its card, wide enough and no narrower than its label,
the scheme followed, and axe-core (colour contrast included) finds nothing serious or critical.
One page load per size and scheme."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from support.browser import axe_violations, emulate, layout_problems, shot, wait_for
from support.review import TEN, chrome, queue_plan, review_page, review_settings, screenshot_dir
from support.runs import run_cli

pytestmark = pytest.mark.slow

SCREENS = [(390, 844, "light"), (390, 844, "dark"), (1280, 800, "light"), (1280, 800, "dark")]
BACKGROUND = {"light": "rgba(247, 248, 250, 1)", "dark": "rgba(17, 20, 24, 1)"}


def _held_and_stale(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> Path:
    """Four items queued: dec-1 decided meanwhile (stale), resolve_flag held by a mode `off`."""
    memory, _ = queue_plan(tmp_path, mp, hub, TEN[3:7])
    argv = ["policy", "set", "--domain", "website", "--operation", "resolve_flag", "--mode"]
    off = [*argv, "off", "--by", "dana", "--reason", "flags audit", "--memory", str(memory)]
    assert run_cli(off, tmp_path, mp).code == 0
    done = httpx.post(f"{hub.url}/decisions/dec-1/resolve", json={"resolution": "B"}, timeout=5)
    assert done.status_code == 200, done.text
    return memory


def _keys(driver: Any) -> dict[str, Any]:
    """The page's own keys on the cards in plan order: dec-1 (stale), web-t-3, fl-1 (held)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    ActionChains(driver).send_keys("ja", "ja", "jar", "Out of scope.", Keys.ESCAPE).perform()
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    checked = driver.find_elements(By.CSS_SELECTOR, 'section.approval input[type="radio"]:checked')
    reasons = driver.find_elements(By.CSS_SELECTOR, "textarea")
    return {
        "hint": driver.find_element(By.ID, "keys-hint").get_attribute("hidden") is None,
        "chosen": [r.get_attribute("value") for r in checked],
        "reasons": [r.get_attribute("value") for r in reasons],
        "decided": driver.find_elements(
            By.CSS_SELECTOR, "p.decided, p.problem, [data-confirm-group]"
        ),
    }


def _one_screen(driver: Any, url: str, screen: tuple[int, int, str]) -> dict[str, Any]:
    from selenium.webdriver.common.by import By

    width, height, scheme = screen
    emulate(driver, width, height, scheme)
    driver.get(url)
    wait_for(driver, "section.approval")
    held = {e.get_attribute("data-bar") for e in driver.find_elements(By.CSS_SELECTOR, ".barred")}
    body = driver.find_element(By.TAG_NAME, "body").value_of_css_property("background-color")
    keys = _keys(driver) if screen == SCREENS[-1] else None
    return {
        "keys": keys,
        "width": driver.execute_script("return window.innerWidth"),
        "background": body,
        "layout": layout_problems(driver),
        "axe": axe_violations(driver),
        "held": held,
        "approve radios": len(
            driver.find_elements(By.CSS_SELECTOR, 'section.approval input[value="approve"]')
        ),
        "dismiss": len(driver.find_elements(By.CSS_SELECTOR, 'button[value="dismiss"]')),
    }


def test_the_queue_fits_a_phone_and_a_laptop_in_both_schemes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = _held_and_stale(tmp_path, monkeypatch, small_hub)
    driver = chrome(tmp_path / "chrome-profile")
    found = {}
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            url = server.url
            for screen in SCREENS:
                found[screen] = _one_screen(driver, url, screen)
                shot(driver, screenshot_dir(tmp_path), "queue-{}x{}-{}".format(*screen))
                url = f"http://{server.address}/"  # the token is traded once
    finally:
        driver.quit()
    # Keys choose for the group, and decide nothing: a stale card has no approve to choose.
    assert found[SCREENS[-1]]["keys"] == {
        "hint": True, "chosen": ["", "approve", "reject", ""],
        "reasons": ["", "", "Out of scope.", ""], "decided": [],
    }  # fmt: skip
    for (width, _, scheme), seen in found.items():
        assert seen["width"] == width  # the viewport meta: a phone lays out at its own width
        assert seen["background"] == BACKGROUND[scheme]
        assert seen["layout"] == [], (width, scheme)
        assert seen["axe"] == [], (width, scheme)
        assert seen["held"] == {"stale", "mode"}
        # Two of four cards can run: the stale one is dismissed or rejected, the held one waits.
        assert seen["approve radios"] == 2 and seen["dismiss"] == 1
