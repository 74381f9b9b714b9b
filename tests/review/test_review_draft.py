"""Nothing a person typed into the queue is lost, over HTTP against a real hub: every card's
choice and reason goes with whichever button sends the form, and the session keeps them (as a
draft review does) through a card's own decision, a 422, a stale item and a refused
confirmation, until each is decided or cleared; a group's or the page's choice decides many."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from support.review import TEN, Browser, queue_plan, review_page, review_settings
from support.runs import run_cli

LONG = "We keep old URLs until the redirect map is reviewed by the SEO team. " * 6


def _page_form(html: str) -> dict[str, str | list[str]]:
    """The hidden fields the queue's form sends, as a browser would (lists kept)."""
    form: dict[str, list[str]] = {}
    queue = html.split('<form class="queue"')[1].split("</form>")[0]
    for name, value in re.findall(r'<input type="hidden" name="([\w.-]+)" value="([^"]*)"', queue):
        form.setdefault(name, []).append(unescape(value))
    return {k: v if len(v) > 1 or k in ("ids", "groups", "approvable") else v[0]
            for k, v in form.items()}  # fmt: skip


def _checked(html: str, approval_id: str) -> str:
    found = re.search(f'name="choice-{approval_id}" value="(\\w*)" checked', html)
    return found.group(1) if found else "?"


def _reason(html: str, approval_id: str) -> str:
    found = re.search(f'name="reason-{approval_id}"[^>]*>([^<]*)</textarea>', html)
    return unescape(found.group(1)) if found else "?"


def _ids(names: dict[str, str], *needles: str) -> list[str]:
    return [next(i for i, n in names.items() if needle in n) for needle in needles]


def test_a_cards_own_reject_and_a_refused_reject_keep_every_other_card_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:6])
    a, b, c, d, e, f = _ids(names, "sitemap", "Redirect", "alt texts", "dec-1", "web-t-3", "fl-1")
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        form = _page_form(page.get("/").text)
        typed = {
            "by": "ana", f"choice-{a}": "approve", f"choice-{b}": "reject",
            f"reason-{b}": LONG, f"choice-{c}": "approve", f"reason-{e}": "Not now.",
        }  # fmt: skip
        # E's own Reject: E is rejected, A, B and C come back as chosen, B's reason whole.
        done = page.post(f"/approvals/{e}", **form, **typed, decision="reject")
        assert done.status_code == 303, done.text
        back = page.get(done.headers["location"]).text
        assert "Rejected by ana: Cancel task web-t-3" in back
        assert [_checked(back, i) for i in (a, b, c, d, f)] == ["approve", "reject", "approve",
                                                                 "", ""]  # fmt: skip
        assert _reason(back, b) == LONG and f'data-approval-id="{e}"' not in back
        # A reject without a reason: 422, and every choice and reason still there.
        form = _page_form(back)
        kept = {k: v for k, v in typed.items() if e not in k}
        refused = page.post(f"/approvals/{f}", **form, **kept, decision="reject")
        assert refused.status_code == 422 and f'data-problem="{f}"' in refused.text
        assert [_checked(refused.text, i) for i in (a, b, c)] == ["approve", "reject", "approve"]
        assert _reason(refused.text, b) == LONG
        # A stale item (decided meanwhile by the CLI): said, and the draft is still there.
        no = ["approvals", "--memory", str(memory), "reject", d, "--by", "ben", "--reason", "No."]
        assert run_cli(no, tmp_path, monkeypatch).code == 0
        gone = page.post(f"/approvals/{d}", **form, **kept, decision="approve")
        again = page.get(gone.headers["location"]).text
        assert "not decided: it was decided or expired meanwhile" in again
        assert [_checked(again, i) for i in (a, b, c)] == ["approve", "reject", "approve"]
        # A confirmation that refuses (asked, then the item changed): nothing lost either.
        asked = page.post(
            "/decide-chosen", **_page_form(again), **kept, reason="Shared.", decision="choose"
        )
        assert asked.status_code == 303
        assert 'name="reason" maxlength="2000" value="Shared."' in page.get("/").text
        no = ["approvals", "--memory", str(memory), "reject", a, "--by", "ben", "--reason", "No."]
        assert run_cli(no, tmp_path, monkeypatch).code == 0
        nonce = asked.headers["location"].rsplit("/", 1)[1]
        page.get(asked.headers["location"])
        confirmed = page.post(f"/decide-chosen/{nonce}", decision="confirm")
        after = page.get(confirmed.headers["location"]).text
        assert "Not decided: Create task ‘Add a sitemap’" in after
        # B rejected and C approved by the group; nothing left of their draft, F still later.
        assert f'data-approval-id="{b}"' not in after and f'data-approval-id="{c}"' not in after
        assert _checked(after, f) == ""
        assert 'name="reason" maxlength="2000" value=""' in after  # used, so not kept


def test_a_page_of_long_reasons_is_sent_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    """Every card's reason goes with any button: a queue of many long ones is not refused."""
    memory, _ = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:2])
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        form = _page_form(page.get("/").text)
        many = {f"reason-apr-{n:04d}-x": "ü" * 2000 for n in range(60)}  # other filters' cards
        kept = page.post("/clear-choices", **form, **many, decision="clear")
        assert kept.status_code == 303, kept.text


def test_a_group_choice_and_every_item_shown_decide_many_with_one_confirmation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory, names = queue_plan(tmp_path, monkeypatch, small_hub, TEN[:6])
    a, b, c, d, e, f = _ids(names, "sitemap", "Redirect", "alt texts", "dec-1", "web-t-3", "fl-1")
    hub = httpx.post(f"{small_hub.url}/decisions/dec-1/resolve", json={"resolution": "B"})
    assert hub.status_code == 200  # dec-1 is stale now: no approve is offered for it
    with review_page(review_settings(memory, small_hub.url, tmp_path)) as server:
        page = Browser(server)
        landing = page.get("/").text
        assert 'name="all-website.create_task"' in landing  # a group of three creates
        form = _page_form(landing)
        assert d not in form["approvable"]
        # The creates' group approves all but B (its own reject); every other item shown is
        # approved, except the stale D, which no wide approve takes.
        chosen = {"by": "ana", "all-website.create_task": "approve", f"choice-{b}": "reject",
                  f"reason-{b}": "Later.", "all": "approve"}  # fmt: skip
        asked = page.post("/decide-chosen", **form, **chosen, decision="choose")
        assert asked.status_code == 303, asked.text
        confirm = page.get(asked.headers["location"]).text
        listed = re.findall(r'data-chosen-id="([\w-]+)" data-chosen="(\w+)"', confirm)
        assert listed == [(a, "approve"), (b, "reject"), (c, "approve"), (e, "approve"),
                          (f, "approve")]  # fmt: skip
        # Leaving the confirmation keeps the group's choice; clearing forgets every choice.
        assert 'name="all-website.create_task" value="approve" checked' in page.get("/").text
        cleared = page.post("/clear-choices", **form, decision="clear")
        assert cleared.status_code == 303
        fresh = page.get("/").text
        assert 'name="all-website.create_task" value="" checked' in fresh
        assert _checked(fresh, b) == "" and _reason(fresh, b) == ""
