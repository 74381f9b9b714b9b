"""The review page in a real headless Chromium: read a note, approve (with its confirmation) and
reject; Enter decides nothing; a write_canon card shows its diff; ten items decided through the
page leave the hub and memory/ exactly as the CLI does; axe-core finds nothing serious.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from browsersupport import (
    approve,
    axe_violations,
    card,
    fill,
    press,
    reject,
    shot,
    wait_for,
)
from custodian_hub import ReferenceHub, load_seed
from reviewsupport import (
    REJECT_REASON,
    TEN,
    chrome,
    hub_state,
    memory_of,
    memory_state,
    queue_plan,
    queue_two,
    review_page,
    review_settings,
    screenshot_dir,
)
from runsupport import CANON, run_cli, small_dataset, tree_digest

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
            assert section.find_element("css selector", "h2").text == (
                "Create task ‘Add a sitemap’ under workstream web-ws-1 "
                "‘Relaunch the marketing site’ in website"
            )
            assert "Unchanged on the hub since it was proposed." in section.text
            assert "If approved now, the authority rules: would run" in section.text
            section.find_element("css selector", "details.more summary").click()
            assert "The launch needs a sitemap." in section.text
            assert "Add a sitemap" in section.find_element("css selector", "table.fields").text
            approved = approve(driver, queued.create_id, "ana", shots)
            assert approved.startswith("Approved and executed: created task ‘Add a sitemap’")
            # The name is remembered for the session: the next card has it already.
            by = card(driver, queued.resolve_id).find_element("css selector", 'input[name="by"]')
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
            for field in (
                section.find_element(By.CSS_SELECTOR, 'input[name="by"]'),
                section.find_element(By.CSS_SELECTOR, 'textarea[name="reason"]'),
            ):
                field.send_keys(Keys.ENTER)
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided, p.problem") == []
            # Enter on a ticked box opens the page of selected items, and decides nothing.
            box = section.find_element(By.CSS_SELECTOR, 'input[name="ids"]')
            box.send_keys(Keys.SPACE)
            box.send_keys(Keys.ENTER)
            wait_for(driver, f'[data-selected-id="{queued.resolve_id}"]')
            bulk = driver.find_element(By.ID, "bulk-reject")
            fill(bulk, "reviewer")
            bulk.find_element(By.CSS_SELECTOR, 'input[name="reason"]').send_keys("no", Keys.ENTER)
            bulk.find_element(By.CSS_SELECTOR, 'input[name="by"]').send_keys(Keys.ENTER)
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided, p.problem") == []
            driver.find_element(By.LINK_TEXT, "Back to the queue").click()
            assert driver.find_elements(By.CSS_SELECTOR, "p.decided") == []
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


def _decide_ten(driver: Any, url: str, ids: dict[str, str], shots: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.set_window_size(1280, 800)
    driver.get(url)
    wait_for(driver, "section.approval")
    bottom = driver.execute_script("return window.innerHeight")
    tops = [
        e.rect["y"] + e.rect["height"]
        for e in driver.find_elements(By.CSS_SELECTOR, "section.approval")
    ]
    assert sum(1 for t in tops if t <= bottom) >= 4, (bottom, tops)  # compact cards
    shot(driver, shots, "approvals")
    for name in APPROVE:
        assert approve(driver, ids[name], "ana").startswith("Approved and executed")
    for name in REJECT_ONE:
        assert reject(driver, ids[name], "ben", "Not this quarter.").startswith("Rejected by ben")
    for name in REJECT_MANY:
        card(driver, ids[name]).find_element(By.CSS_SELECTOR, 'input[name="ids"]').click()
    driver.find_element(By.CSS_SELECTOR, "#bulk button").click()
    bulk = wait_for(driver, "#bulk-reject")
    shot(driver, shots, "reject-selected")
    fill(bulk, "cy")
    bulk.find_element(By.CSS_SELECTOR, 'input[name="reason"]').send_keys("Out of scope.")
    press(bulk, "reject")
    flashes = [wait_for(driver, f'p.decided[data-decided="{ids[n]}"]') for n in REJECT_MANY]
    assert all(f.text.startswith("Rejected by cy") for f in flashes)
    assert "Nothing waits for a decision." in driver.page_source


def _name(operation: str, **params: Any) -> str:
    import json

    return f"{operation} {json.dumps(params, sort_keys=True)}"


APPROVE = [
    _name("create_task", title="Add a sitemap", workstream_id="web-ws-1"),
    _name("resolve_decision", decision_id="dec-1", resolution="A"),
    _name("set_task_status", status="cancelled", task_id="web-t-3"),
    _name("resolve_flag", flag_id="fl-1"),
    _name("create_workstream", domain="website", title="Accessibility audit"),
]
REJECT_ONE = [
    _name("create_task", title="Redirect old blog URLs", workstream_id="web-ws-2"),
    _name("create_task", title="Check alt texts", workstream_id="web-ws-1"),
]
REJECT_MANY = [
    _name("record_decision", options=["Ghost", "Hugo"], title="Which CMS?",
          workstream_id="web-ws-2"),
    _name("set_task_status", status="blocked", task_id="web-t-5"),
    _name("create_task", title="Archive the old forum", workstream_id="web-ws-2"),
]  # fmt: skip


def _ten_by_cli(tmp_path: Path, mp: pytest.MonkeyPatch) -> tuple[Any, Any]:
    db = tmp_path / "twin-hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as hub:
        memory, names = queue_plan(tmp_path / "twin", mp, hub, TEN)
        ids = {name: i for i, name in names.items()}
        base = ["approvals", "--memory", str(memory)]
        for name in APPROVE:
            argv = [*base, "approve", ids[name], "--by", "ana", "--hub", hub.url]
            assert run_cli(argv, tmp_path, mp).code == 0
        for by, reason, group in (("ben", "Not this quarter.", REJECT_ONE),
                                  ("cy", "Out of scope.", REJECT_MANY)):  # fmt: skip
            for name in group:
                argv = [*base, "reject", ids[name], "--by", by, "--reason", reason]
                assert run_cli(argv, tmp_path, mp).code == 0
        return hub_state(hub), memory_of(memory, names)


def test_ten_items_decided_through_the_page_change_what_the_cli_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    twin_hub, twin_memory = _ten_by_cli(tmp_path, monkeypatch)
    memory, names = queue_plan(tmp_path / "page", monkeypatch, small_hub, TEN)
    assert len(names) == 10
    ids = {name: i for i, name in names.items()}
    driver = chrome(tmp_path / "chrome-profile")
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            _decide_ten(driver, server.url, ids, screenshot_dir(tmp_path))
    finally:
        driver.quit()
    assert hub_state(small_hub) == twin_hub
    assert memory_of(memory, names) == twin_memory


def test_axe_core_finds_no_serious_or_critical_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:4])
    first = next(iter(names))
    driver = chrome(tmp_path / "chrome-profile")
    found = {}
    try:
        with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
            driver.get(server.url)
            wait_for(driver, "section.approval")
            found["queue"] = axe_violations(driver)
            fill(card(driver, first), "ana")
            press(card(driver, first), "reject")  # no reason: refused inline
            wait_for(driver, f'[data-problem="{first}"]')
            found["refused"] = axe_violations(driver)
            press(card(driver, first), "approve")
            wait_for(driver, "[data-confirm-approval-id]")
            found["confirm"] = axe_violations(driver)
            for path in ("/history", f"/approvals/{first}", "/runs"):
                driver.get(f"http://{server.address}{path}")
                wait_for(driver, "main")
                found[path] = axe_violations(driver)
    finally:
        driver.quit()
    assert found == {k: [] for k in found}
