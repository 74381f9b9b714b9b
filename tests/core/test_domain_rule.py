"""One domain-name rule (core/contract.py): what the hub accepts is what may name a file."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_hub import ReferenceHub
from custodian_runtime.core.context.neutralize import INVALID_DOMAIN, safe_domain
from custodian_runtime.core.contract import DOMAIN_PATTERN, is_domain
from custodian_runtime.errors import ConfigError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.snapshots import SnapshotStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.settings import parse_domain

VALID = ("website", "a", "9lives", "web-site-2", "web-", "x" * 63)
# Each of these the hub refuses; the old journal rule let the first five name a file.
REFUSED = ("Website", "web.site", "web_site", "website.checkpoint", "x" * 64, "-web", "")
UNSAFE = ("../etc", "a/b", ".hidden", "..", "web\n", "web\x00")
DIGEST = "0" * 64


def _file_names(memory: Path, domain: str) -> list[Path]:
    return [
        JournalStore(memory).path(domain),
        RunLock(memory, domain).path,
        SnapshotStore(memory).path(domain, DIGEST),
    ]


@pytest.mark.parametrize("domain", VALID)
def test_a_domain_valid_today_still_names_its_files(tmp_path: Path, domain: str) -> None:
    assert parse_domain(domain, required=True) == domain and safe_domain(domain) == domain
    journal, lock, snapshot = _file_names(tmp_path, domain)
    assert journal == tmp_path / "journal" / f"{domain}.jsonl"
    assert lock == tmp_path / "locks" / f"{domain}.lock"
    assert snapshot.parent.name == domain


@pytest.mark.parametrize("domain", REFUSED + UNSAFE)
def test_a_domain_the_hub_refuses_names_no_file(tmp_path: Path, domain: str) -> None:
    assert not is_domain(domain) and safe_domain(domain) == INVALID_DOMAIN
    with pytest.raises(ConfigError, match="domain"):
        parse_domain(domain, required=True)
    for make in (
        lambda: JournalStore(tmp_path).path(domain),
        lambda: RunLock(tmp_path, domain),
        lambda: SnapshotStore(tmp_path).path(domain, DIGEST),
    ):
        with pytest.raises(ConfigError, match="cannot name a journal file: use lowercase"):
            make()
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("domain", [d for d in REFUSED if d])
def test_the_hub_refuses_the_same_names(small_hub: ReferenceHub, domain: str) -> None:
    answer = httpx.get(f"{small_hub.url}/decisions", params={"domain": domain}, timeout=5)
    assert answer.status_code == 400
    assert httpx.get(f"{small_hub.url}/decisions", params={"domain": "website"}).status_code == 200


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet="aZ09.-_/\n", max_size=70))
def test_the_file_rule_is_the_contract_pattern(domain: str) -> None:
    assert is_domain(domain) == (re.fullmatch(DOMAIN_PATTERN, domain) is not None)


def test_a_stray_file_in_the_journal_folder_is_no_domain(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    folder = store.directory
    folder.mkdir()
    for name in ("website.jsonl", "Notes.jsonl", "web.site.jsonl", "website.checkpoint.json"):
        (folder / name).write_text("", encoding="utf-8")
    (folder / "old_stuff.d").mkdir()
    assert store.domains() == ["website"]
    assert store.find_run("r9") is None
