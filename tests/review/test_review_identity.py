"""Who decides comes from authentication: a trusted proxy's header or a person's own token on
the page, a configured identity or the OS user on the command line; a typed name only where the
operator allows it, and the journal says which (`by_source`)."""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.decider import Decider, cli_decider, proxy_decider
from custodian_runtime.errors import ConfigError
from custodian_runtime.review.auth import read_tokens
from custodian_runtime.review.server import ReviewServer
from custodian_runtime.settings import Settings, load_settings
from custodian_runtime.settings.people import People
from support.review import Queued, hub_state, queue_two, review_page, review_settings
from support.runs import run_cli, tree_digest
from support.spine import journal

HEADER = "X-Forwarded-Email"
ALICE = "alice@example.org"
LOOPBACK = (ipaddress.ip_network("127.0.0.1/32"),)
ALICE_TOKEN = "a" * 20 + "-alice-token-0001"
BOB_TOKEN = "b" * 20 + "-bob-token-000002"


def _decided(queued: Queued, approval_id: str) -> dict[str, object]:
    found = [
        r.data
        for r in journal(queued.memory)
        if r.kind == "approval_decided" and r.data.get("approval_id") == approval_id
    ]
    assert len(found) == 1, found
    return dict(found[0])


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page)
    assert found is not None
    return found.group(1)


def _with(settings: Settings, **people: object) -> Settings:
    return dataclasses.replace(settings, people=People(**people))  # type: ignore[arg-type]


def test_behind_a_trusted_proxy_the_header_names_who_decides_whatever_the_form_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    settings = review_settings(queued.memory, small_hub.url, tmp_path)
    proxied = _with(settings, user_header=HEADER, trusted_proxies=LOOPBACK)
    before = (tree_digest(queued.memory), hub_state(small_hub))
    with review_page(proxied) as server, httpx.Client(timeout=10) as client:
        base = f"http://{server.address}"
        # No header: the request did not come through the proxy; nothing is shown or decided.
        bare = client.get(f"{base}/approvals")
        assert bare.status_code == 403 and HEADER in bare.text
        assert bare.headers["connection"] == "close"  # so no client reuses what is closed
        # Signed in by the proxy: a session for that person, no start token needed.
        signed = {HEADER: ALICE}
        first = client.get(f"{base}/approvals?domain=website", headers=signed)
        assert first.status_code == 303
        assert first.headers["location"] == "/approvals?domain=website"
        page = client.get(f"{base}/approvals", headers=signed)
        assert page.status_code == 200 and ALICE in page.text
        form = {"decision": "reject", "by": "mallory", "reason": "Not now.", "csrf": ""}
        form["csrf"] = _csrf(page.text)
        # The same session's cookie without the header is refused: the proxy names the person.
        post = f"{base}/approvals/{queued.resolve_id}"
        assert client.post(post, data=form).status_code == 403
        assert (tree_digest(queued.memory), hub_state(small_hub)) == before
        done = client.post(post, data=form, headers=signed)
        assert done.status_code == 303
    decided = _decided(queued, queued.resolve_id)
    assert (decided["by"], decided["by_source"], decided["decision"]) == (
        ALICE,
        "proxy",
        "rejected",
    )


def test_a_header_from_an_address_that_is_not_the_proxy_is_not_believed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    settings = review_settings(queued.memory, small_hub.url, tmp_path)
    elsewhere = (ipaddress.ip_network("10.9.0.0/16"),)
    proxied = _with(settings, user_header=HEADER, trusted_proxies=elsewhere)
    with review_page(proxied) as server:
        answer = httpx.get(f"{server.url}", headers={HEADER: ALICE}, timeout=10)
    assert answer.status_code == 403 and "CUSTODIAN_REVIEW_TRUSTED_PROXIES" in answer.text


def test_each_person_opens_the_page_with_their_own_token_and_decides_under_their_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    tokens = tmp_path / "review-tokens"
    tokens.write_text(
        f"# who may decide\n{ALICE_TOKEN} Alice Example\n{BOB_TOKEN} Bob\n", encoding="utf-8"
    )
    settings = review_settings(queued.memory, small_hub.url, tmp_path)
    with review_page(_with(settings, tokens_file=tokens)) as server:
        base = f"http://{server.address}"
        # The printed start token opens nothing once people have their own.
        assert httpx.get(server.url, timeout=10).status_code == 403
        with httpx.Client(timeout=10) as bob:
            opened = bob.get(f"{base}/?token={BOB_TOKEN}")
            assert opened.status_code == 303
            page = bob.get(f"{base}/approvals")
            form = {"decision": "reject", "by": "Alice Example", "reason": "Later."}
            done = bob.post(
                f"{base}/approvals/{queued.create_id}", data={**form, "csrf": _csrf(page.text)}
            )
            assert done.status_code == 303
    decided = _decided(queued, queued.create_id)
    assert (decided["by"], decided["by_source"]) == ("Bob", "token")


def test_where_typed_names_may_not_decide_an_unnamed_page_decides_as_the_os_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    monkeypatch.setenv("LOGNAME", "dana")
    settings = _with(review_settings(queued.memory, small_hub.url, tmp_path), typed_names=False)
    with review_page(settings) as server, httpx.Client(timeout=10) as client:
        client.get(server.url)
        page = client.get(f"http://{server.address}/approvals")
        assert page.status_code == 200
        (field,) = re.findall(r'<input type="text" name="by"[^>]*>', page.text)
        assert 'value="dana"' in field and "readonly" in field
        form = {"decision": "reject", "by": "anyone", "reason": "No.", "csrf": _csrf(page.text)}
        done = client.post(f"http://{server.address}/approvals/{queued.create_id}", data=form)
        assert done.status_code == 303
    decided = _decided(queued, queued.create_id)
    assert (decided["by"], decided["by_source"]) == ("dana", "os")


def test_by_default_the_page_and_the_cli_decide_as_the_os_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    monkeypatch.delenv("CUSTODIAN_TYPED_NAMES")  # the suite's conftest allows typed names
    monkeypatch.delenv("CUSTODIAN_DECIDER", raising=False)
    monkeypatch.setenv("LOGNAME", "dana")
    assert load_settings({}, {}, tmp_path, domain_required=False, hub_required=False).people == (
        People()
    )
    assert People().page_source == "os" and not People().typed_names
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    memory = ["--memory", str(queued.memory)]
    other = run_cli(
        ["approvals", "reject", queued.create_id, "--by", "eve", "--reason", "x", *memory],
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert other.code == 2
    assert "--by 'eve'" in other.stderr and "decides as 'dana' (the OS user)" in other.stderr
    assert "drop --by, or set CUSTODIAN_TYPED_NAMES=1" in other.stderr
    same = run_cli(
        ["approvals", "reject", queued.create_id, "--by", "dana", "--reason", "No.", *memory],
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert same.code == 0, same.stderr
    assert (lambda d: (d["by"], d["by_source"]))(_decided(queued, queued.create_id)) == (
        "dana", "os",
    )  # fmt: skip
    plain = run_cli(
        ["approvals", "reject", queued.resolve_id, "--reason", "No.", *memory],
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert plain.code == 0, plain.stderr
    decided = _decided(queued, queued.resolve_id)
    assert (decided["by"], decided["by_source"]) == ("dana", "os")


def test_a_typed_name_on_the_page_is_journaled_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    settings = review_settings(queued.memory, small_hub.url, tmp_path)
    with review_page(settings) as server, httpx.Client(timeout=10) as client:
        client.get(server.url)
        page = client.get(f"http://{server.address}/approvals")
        form = {"decision": "reject", "by": "carol", "reason": "No.", "csrf": _csrf(page.text)}
        client.post(f"http://{server.address}/approvals/{queued.create_id}", data=form)
    decided = _decided(queued, queued.create_id)
    assert (decided["by"], decided["by_source"]) == ("carol", "typed")


def test_the_cli_decides_as_the_configured_identity_or_the_os_user_and_typed_only_if_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    memory = ["--memory", str(queued.memory)]
    no_typing = run_cli(
        ["approvals", "reject", queued.create_id, "--by", "eve", "--reason", "x", *memory],
        tmp_path, monkeypatch, CUSTODIAN_TYPED_NAMES="0",
    )  # fmt: skip
    assert no_typing.code == 2 and "CUSTODIAN_TYPED_NAMES=1" in no_typing.stderr
    configured = run_cli(
        ["approvals", "reject", queued.create_id, "--reason", "Not this one.", *memory],
        tmp_path, monkeypatch, CUSTODIAN_DECIDER="ops-oncall", CUSTODIAN_TYPED_NAMES="0",
    )  # fmt: skip
    assert configured.code == 0, configured.stderr
    decided = _decided(queued, queued.create_id)
    assert (decided["by"], decided["by_source"]) == ("ops-oncall", "config")
    monkeypatch.delenv("CUSTODIAN_DECIDER", raising=False)
    monkeypatch.setenv("LOGNAME", "dana")
    as_os = run_cli(
        ["approvals", "reject", queued.resolve_id, "--reason", "No.", *memory],
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert as_os.code == 0, as_os.stderr
    decided = _decided(queued, queued.resolve_id)
    assert (decided["by"], decided["by_source"]) == ("dana", "os")


def test_who_decides_is_chosen_in_order_and_bad_names_are_refused() -> None:
    assert cli_decider("  ann ", "ops", "root", typed_allowed=True) == Decider("ann", "typed")
    assert cli_decider(None, "ops", "root", typed_allowed=False) == Decider("ops", "config")
    assert cli_decider(None, None, "root", typed_allowed=False) == Decider("root", "os")
    assert "--by: name the person" in str(cli_decider(" ", None, "root", typed_allowed=True))
    assert "CUSTODIAN_DECIDER" in str(cli_decider(None, None, None, typed_allowed=True))
    assert "control character" in str(cli_decider("a\x1b[2Jb", None, None, typed_allowed=True))
    assert cli_decider("ops", "ops", "root", typed_allowed=False) == Decider("ops", "config")
    assert cli_decider("root", None, "root", typed_allowed=False) == Decider("root", "os")
    refused = str(cli_decider("ann", "ops", "root", typed_allowed=False))
    assert "decides as 'ops' (CUSTODIAN_DECIDER)" in refused and "drop --by" in refused
    trusted = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128"))
    assert proxy_decider(HEADER, ALICE, "10.1.2.3", trusted) == Decider(ALICE, "proxy")
    assert proxy_decider(HEADER, ALICE, "::ffff:10.1.2.3", trusted) == Decider(ALICE, "proxy")
    assert proxy_decider(HEADER, ALICE, "::1", trusted) == Decider(ALICE, "proxy")
    assert "is not in" in str(proxy_decider(HEADER, ALICE, "192.168.0.2", trusted))
    assert "is missing" in str(proxy_decider(HEADER, " ", "10.0.0.1", trusted))


def test_identity_settings_are_checked_and_say_what_to_fix(tmp_path: Path) -> None:
    def load(**env: str) -> Settings:
        return load_settings({}, env, tmp_path, domain_required=False, hub_required=False)

    with pytest.raises(ConfigError, match="CUSTODIAN_REVIEW_TRUSTED_PROXIES is not"):
        load(CUSTODIAN_REVIEW_USER_HEADER=HEADER)
    with pytest.raises(ConfigError, match="not both"):
        load(CUSTODIAN_REVIEW_USER_HEADER=HEADER, CUSTODIAN_REVIEW_TOKENS_FILE="t")
    with pytest.raises(ConfigError, match="not an address or network"):
        load(CUSTODIAN_REVIEW_USER_HEADER=HEADER, CUSTODIAN_REVIEW_TRUSTED_PROXIES="proxy")
    with pytest.raises(ConfigError, match="use 1 or 0"):
        load(CUSTODIAN_TYPED_NAMES="maybe")
    people = load(
        CUSTODIAN_REVIEW_USER_HEADER="X-Auth-Request-User",
        CUSTODIAN_REVIEW_TRUSTED_PROXIES="127.0.0.1, 10.0.0.0/8",
    ).people
    assert people.page_source == "proxy" and len(people.trusted_proxies) == 2
    short = tmp_path / "short"
    short.write_text("abc alice\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: a token is at least"):
        read_tokens(short)
    twice = tmp_path / "twice"
    twice.write_text(f"{ALICE_TOKEN} a\n{ALICE_TOKEN} b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2: this token is given twice"):
        read_tokens(twice)
    with pytest.raises(ConfigError, match="cannot read"):
        ReviewServer(_with(load(), tokens_file=tmp_path / "missing"), "127.0.0.1", 0).close()


def test_modes_grants_and_settles_take_the_same_decider_as_approvals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = queue_two(tmp_path, monkeypatch, small_hub)
    memory = ["--memory", str(queued.memory)]
    mode = ["policy", "set", "--domain", "website", "--operation", "create_task", "--mode", "ask"]
    typed = run_cli(
        [*mode, "--by", "eve", "--reason", "x", *memory], tmp_path, monkeypatch,
        CUSTODIAN_TYPED_NAMES="0",
    )  # fmt: skip
    assert typed.code == 2 and "CUSTODIAN_TYPED_NAMES=1" in typed.stderr
    done = run_cli(
        [*mode, "--reason", "Onboarding.", *memory], tmp_path, monkeypatch,
        CUSTODIAN_DECIDER="ops-oncall", CUSTODIAN_TYPED_NAMES="0",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    (set_,) = [r.data for r in journal(queued.memory) if r.kind == "policy_set"]
    assert set_["by"] == "ops-oncall"
    settle = run_cli(
        ["journal", "settle", "website:1", "--by", "eve", "--reason", "x", *memory],
        tmp_path, monkeypatch, CUSTODIAN_TYPED_NAMES="0",
    )  # fmt: skip
    assert settle.code == 2 and "CUSTODIAN_TYPED_NAMES=1" in settle.stderr
