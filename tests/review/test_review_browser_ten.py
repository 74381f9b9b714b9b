"""Ten items decided through the page in headless Chromium change the hub and memory/ exactly as
the CLI does; axe-core finds no serious or critical violation on any kind of page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from support.browser import (
    axe_violations,
    card,
    emulate,
    fill,
    layout_problems,
    press,
    reading,
    shot,
    wait_for,
)
from support.review import (
    TEN,
    chrome,
    hub_state,
    memory_of,
    queue_plan,
    review_page,
    review_settings,
    screenshot_dir,
)
from support.runs import run_cli, small_dataset

pytestmark = pytest.mark.slow


class Counted:
    """The clicks a person makes (each `click`) and the pages the server renders for them."""

    def __init__(self, views: Any, mp: pytest.MonkeyPatch) -> None:
        self.clicks, self.loads = 0, []
        shown = views.get

        def get(path: str, *args: Any, **kwargs: Any) -> Any:
            if not path.startswith("/static/"):
                self.loads.append(path)
            return shown(path, *args, **kwargs)

        mp.setattr(views, "get", get)

    def click(self, element: Any) -> None:
        self.clicks += 1
        element.click()


def _decide_ten(driver: Any, url: str, ids: dict[str, str], shots: Path, counted: Counted) -> None:
    """Six approvals and four rejections (one reason of its own, one shared) of three runs'
    items, on a phone: every item shown approved, but four rejected on their own cards."""
    from selenium.webdriver.common.by import By

    emulate(driver, 390, 844, "light")
    driver.get(url)
    page = wait_for(driver, "form.queue")
    cards = page.find_elements(By.CSS_SELECTOR, "section.approval")
    boxes = [c.rect for c in cards]
    # The first card is whole above the fold, and three cards fit a screen, one after another.
    assert boxes[0]["y"] + boxes[0]["height"] < 844, boxes[0]
    assert max(b["height"] for b in boxes) <= 844 / 3, [b["height"] for b in boxes]
    print(
        f"390x844: first card at y={boxes[0]['y']:.0f}, cards {min(b['height'] for b in boxes):.0f}"
        f"-{max(b['height'] for b in boxes):.0f} px tall"
    )
    # Grouped by what a person decides: the creates of two runs together, in their plans' order.
    order = [c.get_attribute("data-approval-id") for c in cards]
    creates = [
        ids[_name(p["operation"], **p["params"])] for p in TEN if p["operation"] == "create_task"
    ]
    assert order[:4] == creates
    emulate(driver, 1280, 800, "light")  # the docs' picture of the queue is a laptop's
    # On a laptop's screen a reviewer reads four whole cards without scrolling.
    bottoms = [c.rect["y"] + c.rect["height"] for c in cards]
    assert sum(1 for b in bottoms if b <= 800) >= 4, bottoms
    shot(driver, shots, "approvals")
    emulate(driver, 390, 844, "light")
    counted.click(page.find_element(By.CSS_SELECTOR, 'input[name="by"]'))
    page.find_element(By.CSS_SELECTOR, 'input[name="by"]').send_keys("ana")
    for name in [*REJECT_ONE, *REJECT_MANY]:
        counted.click(
            card(driver, ids[name]).find_element(By.CSS_SELECTOR, 'input[value="reject"]')
        )
    (own,) = REJECT_ONE
    reason = card(driver, ids[own]).find_element(By.CSS_SELECTOR, "textarea")
    counted.click(reason)
    reason.send_keys("Not this quarter.")
    counted.click(page.find_element(By.CSS_SELECTOR, 'input[name="all"][value="approve"]'))
    shared = page.find_element(By.CSS_SELECTOR, 'input[name="reason"]')
    counted.click(shared)
    shared.send_keys("Out of scope.")
    counted.click(page.find_element(By.CSS_SELECTOR, 'button[value="choose"]'))
    confirm = wait_for(driver, "[data-confirm-group]")
    listed = [
        e.get_attribute("data-chosen-id") for e in confirm.find_elements(By.CSS_SELECTOR, "li")
    ]
    assert listed == order  # every item, in the page's order, each with what it does
    assert (
        "Reason: “Not this quarter.”" in confirm.text and confirm.text.count("Out of scope.") == 3
    )
    shot(driver, shots, "confirm-group")
    counted.click(confirm.find_element(By.CSS_SELECTOR, 'button[value="confirm"]'))
    flashes = [wait_for(driver, f'p.decided[data-decided="{ids[n]}"]') for n in ids]
    assert sum(f.text.startswith("Approved and executed") for f in flashes) == 6
    assert sum(f.text.startswith("Rejected by ana") for f in flashes) == 4
    assert "Nothing waits for a decision." in driver.page_source


def _name(operation: str, **params: Any) -> str:
    return f"{operation} {json.dumps(params, sort_keys=True)}"


APPROVE = [
    _name("create_task", title="Add a sitemap", workstream_id="web-ws-1"),
    _name("create_task", title="Check alt texts", workstream_id="web-ws-1"),
    _name("resolve_decision", decision_id="dec-1", resolution="A"),
    _name("set_task_status", status="cancelled", task_id="web-t-3"),
    _name("resolve_flag", flag_id="fl-1"),
    _name("create_workstream", domain="website", title="Accessibility audit"),
]
REJECT_ONE = [
    _name("create_task", title="Redirect old blog URLs", workstream_id="web-ws-2"),
]
REJECT_MANY = [
    _name("record_decision", options=["Ghost", "Hugo"], title="Which CMS?",
          workstream_id="web-ws-2"),
    _name("set_task_status", status="blocked", task_id="web-t-5"),
    _name("create_task", title="Archive the old forum", workstream_id="web-ws-2"),
]  # fmt: skip


def queue_three_runs(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub
) -> tuple[Path, dict[str, str]]:
    """TEN queued by three runs, one after another: four, three and three items."""
    for part in (TEN[:4], TEN[4:7], TEN[7:]):
        memory, names = queue_plan(tmp_path, mp, hub, part, force=True)
    return memory, names


def _ten_by_cli(tmp_path: Path, mp: pytest.MonkeyPatch) -> tuple[Any, Any]:
    db = tmp_path / "twin-hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as hub:
        memory, names = queue_three_runs(tmp_path / "twin", mp, hub)
        ids = {name: i for i, name in names.items()}
        base = ["approvals", "--memory", str(memory)]
        for name in APPROVE:
            argv = [*base, "approve", ids[name], "--by", "ana", "--hub", hub.url]
            assert run_cli(argv, tmp_path, mp).code == 0
        for by, reason, group in (("ana", "Not this quarter.", REJECT_ONE),
                                  ("ana", "Out of scope.", REJECT_MANY)):  # fmt: skip
            for name in group:
                argv = [*base, "reject", ids[name], "--by", by, "--reason", reason]
                assert run_cli(argv, tmp_path, mp).code == 0
        return hub_state(hub), memory_of(memory, names)


def test_ten_items_decided_through_the_page_change_what_the_cli_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    twin_hub, twin_memory = _ten_by_cli(tmp_path, monkeypatch)
    memory, names = queue_three_runs(tmp_path / "page", monkeypatch, small_hub)
    assert len(names) == 10
    ids = {name: i for i, name in names.items()}
    driver = chrome(tmp_path / "chrome-profile")
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            counted = Counted(server.httpd.views, monkeypatch)
            _decide_ten(driver, server.url, ids, screenshot_dir(tmp_path), counted)
    finally:
        driver.quit()
    print(f"ten decisions: {counted.clicks} clicks, {len(counted.loads)} page loads")
    assert counted.clicks <= 12 and len(counted.loads) <= 6, (counted.clicks, counted.loads)
    assert hub_state(small_hub) == twin_hub
    assert memory_of(memory, names) == twin_memory


LONG = "The old URLs stay until the redirect map is reviewed by the people who own it. " * 4


def _choose(driver: Any, chosen: dict[str, str]) -> None:
    from selenium.webdriver.common.by import By

    for approval_id, choice in chosen.items():
        radio = f'input[type="radio"][value="{choice}"]'
        card(driver, approval_id).find_element(By.CSS_SELECTOR, radio).click()


def _typed(driver: Any, ids: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each card's checked choice and its reason, as the page shows them now."""
    from selenium.webdriver.common.by import By

    found = []
    for approval_id in ids:
        section = card(driver, approval_id)
        radio = section.find_element(By.CSS_SELECTOR, 'input[type="radio"]:checked')
        reason = section.find_element(By.CSS_SELECTOR, "textarea").get_attribute("value")
        found.append((radio.get_attribute("value") or "", reason or ""))
    return found


def test_axe_core_finds_no_serious_or_critical_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    """Each kind of page on a phone in the dark scheme: nothing serious, and everything fits;
    nothing typed is lost when a card's own button or a refused reject sends the form."""
    from selenium.webdriver.common.by import By

    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    needles = ("Add a sitemap", "Redirect old", "Check alt", "dec-1")
    first, second, third, fourth = [next(i for i, n in names.items() if s in n) for s in needles]
    driver = chrome(tmp_path / "chrome-profile")
    found, read = {}, {}

    def check(name: str) -> None:
        found[name] = (axe_violations(driver), layout_problems(driver))

    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            emulate(driver, 390, 844, "dark")
            driver.get(server.url)
            wait_for(driver, "section.approval")
            check("queue")
            # Approve A, reject B with a long reason, approve C, then E's own Reject: E is
            # rejected, and A, B and C come back as they were typed.
            fill(card(driver, fourth), "ana", "Not now.")
            _choose(driver, {first: "approve", second: "reject", third: "approve"})
            card(driver, second).find_element(By.CSS_SELECTOR, "textarea").send_keys(LONG)
            press(card(driver, fourth), "reject")
            assert wait_for(driver, f'p.decided[data-decided="{fourth}"]').text.startswith(
                "Rejected by ana"
            )
            assert _typed(driver, (first, second, third)) == [
                ("approve", ""), ("reject", LONG), ("approve", "")
            ]  # fmt: skip
            press(card(driver, first), "reject")  # no reason: refused inline, all kept
            wait_for(driver, f'[data-problem="{first}"]')
            assert _typed(driver, (first, second, third)) == [
                ("approve", ""), ("reject", LONG), ("approve", "")
            ]  # fmt: skip
            check("refused")
            press(card(driver, first), "approve")
            wait_for(driver, "[data-confirm-approval-id]")
            check("confirm")
            driver.get(f"http://{server.address}/")  # the name is remembered for the session
            card(driver, second).find_element(By.CSS_SELECTOR, 'input[value="approve"]').click()
            driver.find_element(By.CSS_SELECTOR, 'button[value="choose"]').click()
            wait_for(driver, "[data-confirm-group]")
            check("confirm-group")
            for path in ("/history", f"/approvals/{first}", "/runs", "/standing?domain=website",
                         f"/reject-selected?ids={first}"):  # fmt: skip
                driver.get(f"http://{server.address}{path}")
                wait_for(driver, "main")
                check(path)
                if path in ("/runs", "/standing?domain=website"):
                    read[path] = reading(driver)
    finally:
        driver.quit()
    assert found == {k: ([], []) for k in found}
    # The runs and Standing pages read as cards on a phone: words whole, the chart's labels
    # legible, a run's start to the second.
    assert read["/runs"]["smallest_label"] >= 11, read
    assert {p: (r["broken"], r["microseconds"]) for p, r in read.items()} == {
        p: ([], False) for p in read
    }
