"""Driving the review page in headless Chromium: waits, screenshots, deciding, axe-core."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.runs import REPO

AXE = REPO / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_INSTALL = (
    "make setup (it runs: npm ci --prefix .cache/axe, from tests/support/axe/package-lock.json)"
)
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
    """Type the name (replacing a remembered one) and the reason into a card's form (the name
    field of a queue's card is its run's, one per group)."""
    from selenium.webdriver.common.by import By

    named = section.find_elements(By.CSS_SELECTOR, 'input[name="by"]')
    form = section if named else section.find_element(By.XPATH, "ancestor::form")
    field = form.find_element(By.CSS_SELECTOR, 'input[name="by"]')
    field.clear()
    field.send_keys(by)
    if reason:
        section.find_element(By.CSS_SELECTOR, 'textarea[name^="reason"]').send_keys(reason)


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


def emulate(driver: Any, width: int, height: int, scheme: str) -> None:
    """A screen of `width`×`height` CSS px (a phone below 600: its viewport meta applies) that
    prefers the colour `scheme`, through the DevTools protocol."""
    feature = {"name": "prefers-color-scheme", "value": scheme}
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [feature]})
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)


# Each visible control: at least 44 px wide (a radio or checkbox: its label), inside its card (or
# form), and no narrower than its label's text; the page itself does not scroll sideways.
LAYOUT = r"""
const out = [], doc = document.documentElement;
if (doc.scrollWidth > window.innerWidth) out.push(["page", "scrolls sideways", doc.scrollWidth]);
const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const broken = label => [...label.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()
  && !/\s/.test(n.textContent.trim()) && (() => { const r = document.createRange();
    r.selectNodeContents(n); return r.getClientRects().length > 1; })());
const textWidth = label => Math.max(0, ...[...label.childNodes]
  .filter(n => n.nodeType === 3 && n.textContent.trim())
  .map(n => { const r = document.createRange(); r.selectNodeContents(n);
              return r.getBoundingClientRect().width; }));
for (const e of document.querySelectorAll("button, input, select, textarea")) {
  if (e.type === "hidden" || !shown(e)) continue;
  const box = ["radio", "checkbox"].includes(e.type) ? (e.closest("label") || e) : e;
  const r = box.getBoundingClientRect(), name = `${e.name}=${e.value}`.slice(0, 60);
  if (r.width < 44) out.push([name, "narrower than 44 px", r.width]);
  const card = e.closest("section.approval, form, section, header");
  const c = card ? card.getBoundingClientRect() : {left: 0, right: window.innerWidth};
  if (r.left < c.left - 0.5 || r.right > c.right + 0.5) out.push([name, "outside its card"]);
  if (e.tagName === "BUTTON" && e.scrollWidth > e.clientWidth + 1) {
    out.push([name, "narrower than its text", e.scrollWidth, e.clientWidth]);
  }
  const label = box === e ? e.closest("label") : null;
  if (label && r.width + 0.5 < textWidth(label)) out.push([name, "narrower than its label"]);
  if (label && broken(label)) out.push([name, "its label's word is broken"]);
}
return out;
"""


def layout_problems(driver: Any) -> list[Any]:
    """What does not fit on the page open in `driver` (see LAYOUT); [] when all fits."""
    found: list[Any] = driver.execute_script(LAYOUT)
    return found


# How a page reads on a phone: words a line break splits (letter by letter), the chart's
# smallest label as drawn (its font size times the SVG's scale), a time shown with microseconds.
READING = r"""
const broken = [], walker = document.createTreeWalker(document.querySelector("main"), 4);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  if (n.parentElement.closest("pre, svg, code, .visually-hidden, thead")) continue;
  for (const m of n.textContent.matchAll(/\S{2,}/g)) {
    const r = document.createRange();
    r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
    const lines = new Set([...r.getClientRects()].map(b => Math.round(b.top)));
    if (lines.size > 1) broken.push(m[0]);
  }
}
const sizes = [...document.querySelectorAll("svg.chart text")].map(t => {
  const svg = t.ownerSVGElement;
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return parseFloat(getComputedStyle(t).fontSize) * scale;
});
return {broken: broken, smallest_label: sizes.length ? Math.min(...sizes) : null,
        microseconds: /\d\d:\d\d:\d\d\.\d/.test(document.querySelector("main").innerText)};
"""


def reading(driver: Any) -> dict[str, Any]:
    """How the page open in `driver` reads (see READING)."""
    found: dict[str, Any] = driver.execute_script(READING)
    return found
