"""The fold of a person's words into a standing, and the store's kept words read at each write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_runtime.core.journal.kinds import GrantIssued, GrantRevoked, GrantUsed, PolicySet
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing, with_words
from custodian_runtime.core.standing.rule import in_flight
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.standing_store import StandingStore

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GID = "grant-0123456789ab"


def _grant(gid: str = GID) -> GrantIssued:
    grant = Grant(id=gid, domain="website", operation="set_task_status", max_uses=3,
                  expires_at=NOW + timedelta(days=7), by="ana", reason="routine",
                  hub_id="hub_id:h1", issued_at=NOW)  # fmt: skip
    return GrantIssued(grant=grant.model_dump(mode="json"))


def _mode(mode: str, by: str = "bo") -> PolicySet:
    return PolicySet(operation="add_progress_event", mode=mode, by=by, reason="quiet week")


def test_words_apply_in_the_order_given_and_a_later_mode_wins() -> None:
    words = [(_mode("off"), NOW), (_mode("ask", by="cy"), NOW + timedelta(minutes=1))]
    standing = with_words(Standing(), words)
    setting = standing.modes.settings["add_progress_event"]
    assert (setting.mode, setting.by, setting.at) == ("ask", "cy", NOW + timedelta(minutes=1))
    assert with_words(Standing(), reversed(words)).modes.of("add_progress_event") == "off"


def test_a_revoke_of_a_grant_not_seen_yet_binds_it_when_it_comes() -> None:
    revoke = GrantRevoked(grant_id=GID, by="bo", reason="stop")
    standing = with_words(Standing(), [(revoke, NOW), (_grant(), NOW)])
    [grant] = standing.grants
    assert grant.revoked


def test_each_use_counts_once_and_a_mode_that_widens_nothing_is_refused() -> None:
    used = GrantUsed(grant_id=GID, index=0, operation="set_task_status", fingerprint="f")
    standing = with_words(Standing(), [(_grant(), NOW), (used, NOW), (used, NOW)])
    assert standing.uses[GID] == 2
    auto = PolicySet(operation="create_task", mode="auto", by="bo", reason="x")
    assert with_words(standing, [(auto, NOW)]).modes.of("create_task") == "ask"


def test_in_flight_a_kept_grant_is_not_used_until_journaled_but_a_kept_revoke_binds() -> None:
    journaled = with_words(Standing(), [(_grant(), NOW)])
    other = "grant-00000000000f"
    revoke = GrantRevoked(grant_id=GID, by="bo", reason="stop")
    kept = with_words(journaled, [(_grant(other), NOW), (revoke, NOW), (_mode("off"), NOW)])
    ruled = in_flight(kept, journaled)
    assert [(g.id, g.revoked) for g in ruled.grants] == [(GID, True)]
    assert ruled.modes.of("add_progress_event") == "off"


def test_kept_standing_is_the_base_itself_when_nothing_was_kept(tmp_path: Path) -> None:
    store = StandingStore(tmp_path)
    base = with_words(Standing(), [(_grant(), NOW)])
    assert store.kept_standing("website", base) is base


def test_kept_standing_applies_what_was_kept_while_the_domain_was_busy(tmp_path: Path) -> None:
    store = StandingStore(tmp_path)
    store.record("website", _grant())
    base = store.standing("website")
    with RunLock(tmp_path, "website", run_id="r-busy"):
        revoke = GrantRevoked(grant_id=GID, by="bo", reason="stop")
        assert store.record("website", _mode("off"), revoke) is not None
        assert store.record("platform", _mode("ask")) is None  # another domain: journaled
    kept = store.kept_standing("website", base)
    assert kept.modes.of("add_progress_event") == "off"
    assert [g.revoked for g in kept.grants] == [True]
    assert store.standing("website") == base  # the journal holds none of it yet
