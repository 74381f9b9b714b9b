"""The review page is safe by default: token, Host and CSRF checks, and a strict CSP.

Every refused request is a 403 and leaves the approvals, the journal and the hub as they were.
"""

from __future__ import annotations

import re
import subprocess
import sys
from http.cookies import SimpleCookie
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.review.server import CSP, ReviewServer
from support.review import hub_state, queue_two, review_page, review_settings
from support.runs import tree_digest


def _session(server: ReviewServer) -> str:
    """Open the start URL; return the session cookie the page sets, as a Cookie header."""
    first = httpx.get(server.url, follow_redirects=False, timeout=10)
    assert first.status_code == 303 and first.headers["location"] == "/"
    set_cookie = first.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    cookie: SimpleCookie = SimpleCookie()
    cookie.load(set_cookie)
    name = f"custodian_review_{server.port}"
    return f"{name}={cookie[name].value}"


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page)
    assert found is not None
    return found.group(1)


def test_without_token_with_a_foreign_host_or_a_bad_csrf_the_page_answers_403(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    settings = review_settings(queued.memory, small_hub.url, tmp_path)
    before = (tree_digest(queued.memory), hub_state(small_hub))
    with review_page(settings) as server:
        base = f"http://{server.address}"
        cookie = {"Cookie": _session(server)}
        page = httpx.get(f"{base}/approvals", headers=cookie, timeout=10)
        assert page.status_code == 200 and page.headers["content-security-policy"] == CSP
        csrf = _csrf(page.text)
        other_csrf = _csrf(
            httpx.get(
                f"{base}/approvals",
                headers={"Cookie": _session(server)},
                timeout=10,
            ).text
        )
        post = f"{base}/approvals/{queued.resolve_id}"
        form = {"decision": "reject", "by": "mallory", "reason": "no"}
        foreign = {"Host": f"evil.example:{server.port}"}
        refused = [
            httpx.get(base + "/", timeout=10),
            httpx.get(base + "/approvals?token=wrong", timeout=10),
            httpx.get(base + "/", headers={**cookie, **foreign}, timeout=10),
            httpx.get(server.url, headers=foreign, timeout=10),
            httpx.post(post, data={**form, "csrf": csrf}, timeout=10),
            httpx.post(post, data={**form, "csrf": csrf}, headers={**cookie, **foreign}),
            httpx.post(post, data=form, headers=cookie, timeout=10),
            httpx.post(post, data={**form, "csrf": "0" * 64}, headers=cookie, timeout=10),
            httpx.post(post, data={**form, "csrf": other_csrf}, headers=cookie, timeout=10),
        ]
        assert [r.status_code for r in refused] == [403] * len(refused)
        assert all(r.headers["content-security-policy"] == CSP for r in refused)
        assert (tree_digest(queued.memory), hub_state(small_hub)) == before
        # The same form with the session's own token is carried out: the 403s were the guard.
        done = httpx.post(post, data={**form, "csrf": csrf}, headers=cookie, timeout=10)
        assert done.status_code == 303 and done.headers["location"] == "/"
        landing = httpx.get(f"{base}/", headers=cookie, timeout=10)
        assert "Rejected by mallory" in landing.text
        assert tree_digest(queued.memory) != before[0]


def test_a_stale_item_says_so_on_the_page_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    response = httpx.post(
        f"{small_hub.url}/decisions/dec-1/resolve", json={"resolution": "B"}, timeout=5
    )
    assert response.status_code == 200, response.text
    with review_page(review_settings(queued.memory, small_hub.url, tmp_path)) as server:
        base = f"http://{server.address}"
        cookie = {"Cookie": _session(server)}
        page = httpx.get(f"{base}/approvals", headers=cookie, timeout=10).text
        # The decision left the domain's open decisions: the page shows what changed.
        assert "decision.status: &#34;open&#34; -&gt; (absent)" in page
        assert "If approved now, the authority rules: <strong>stale:" in page
        form = {"decision": "approve", "by": "ana", "csrf": _csrf(page)}
        asked = httpx.post(f"{base}/approvals/{queued.resolve_id}", data=form, headers=cookie)
        assert asked.status_code == 303
        confirm = httpx.get(base + asked.headers["location"], headers=cookie, timeout=10).text
        nonce = re.search(r'name="nonce" value="([\w-]+)"', confirm)
        assert nonce is not None
        yes = {"decision": "confirm", "nonce": nonce.group(1), "csrf": _csrf(page)}
        done = httpx.post(f"{base}/approvals/{queued.resolve_id}/confirm", data=yes, headers=cookie)
        assert done.status_code == 303
        landing = httpx.get(f"{base}/", headers=cookie, timeout=10).text
        assert "but the target had changed: nothing ran" in landing
    decisions = httpx.get(f"{small_hub.url}/decisions?domain=website", timeout=5).json()
    assert [d["resolution"] for d in decisions["decisions"] if d["id"] == "dec-1"] == ["B"]


def test_an_unreachable_hub_is_said_on_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    gone = small_hub.url
    small_hub.stop()
    with review_page(review_settings(queued.memory, gone, tmp_path)) as server:
        cookie = {"Cookie": _session(server)}
        page = httpx.get(f"http://{server.address}/approvals", headers=cookie, timeout=30).text
    assert "the hub could not be read" in page
    assert page.count("data-approval-id=") == 2


def test_custodian_review_prints_its_url_with_the_token_and_binds_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    argv = [sys.executable, "-m", "custodian_runtime", "review", "--memory", str(queued.memory)]
    child = subprocess.Popen(
        [*argv, "--hub", small_hub.url, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        found = re.match(r"custodian review: (http://127\.0\.0\.1:\d+/\?token=[\w-]{40,})$", line)
        assert found is not None, line
        page = httpx.get(found.group(1), follow_redirects=True, timeout=10)
        assert page.status_code == 200 and queued.run_id in page.text
    finally:
        child.terminate()
        child.wait(timeout=10)


def test_a_session_of_one_review_page_does_not_open_another(tmp_path: Path) -> None:
    settings = review_settings(tmp_path / "memory", "embedded", tmp_path)
    with review_page(settings) as first, review_page(settings) as second:
        cookie = _session(first)
        assert cookie.startswith(f"custodian_review_{first.port}=")
        mine = httpx.get(f"http://{first.address}/runs", headers={"Cookie": cookie}, timeout=10)
        theirs = httpx.get(f"http://{second.address}/", headers={"Cookie": cookie}, timeout=10)
        assert (mine.status_code, theirs.status_code) == (200, 403)
        assert "No journal yet" in mine.text
