"""What a Redmine backend would stand on, asked of a real Redmine (docs/trackers.md, "Redmine").

Each test is one fact of Redmine's REST API the mapping relies on or must declare: reads carry an
ETag and answer 304; `lock_version` is taken on a write but never shown, so a client cannot make
a change conditional; `If-Match` is ignored; a note on an update is kept as a journal, which is
where a write's mark would be found again; a project is a domain; nothing is idempotent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from support.redmine import Redmine

_names = itertools.count()


@pytest.fixture
def api(redmine: Redmine) -> Iterator[httpx.Client]:
    """Redmine's REST API as its admin."""
    headers = {"X-Redmine-API-Key": redmine.key}
    with httpx.Client(base_url=redmine.web, headers=headers, timeout=30) as client:
        yield client


def _project(api: httpx.Client) -> str:
    name = f"facts-{next(_names)}"
    made = api.post("/projects.json", json={"project": {"name": name, "identifier": name}})
    assert made.status_code == 201, made.text
    return name


def _issue(api: httpx.Client, project: str, **fields: Any) -> dict[str, Any]:
    made = api.post("/issues.json", json={"issue": {"project_id": project, **fields}})
    assert made.status_code == 201, made.text
    issue: dict[str, Any] = made.json()["issue"]
    return issue


def test_the_api_key_reaches_the_admin_and_a_project_is_a_domain(api: httpx.Client) -> None:
    assert api.get("/users/current.json").json()["user"]["admin"] is True
    name = _project(api)
    assert api.get(f"/projects/{name}.json").json()["project"]["identifier"] == name
    # A domain of digits only is a valid domain name, and no project's identifier.
    refused = api.post("/projects.json", json={"project": {"name": "x", "identifier": "20261"}})
    assert refused.status_code == 422


def test_a_read_has_an_etag_and_answers_304_until_the_issue_changes(api: httpx.Client) -> None:
    issue = _issue(api, _project(api), subject="Write the page")
    first = api.get(f"/issues/{issue['id']}.json")
    tag = first.headers["ETag"]
    assert api.get(f"/issues/{issue['id']}.json", headers={"If-None-Match": tag}).status_code == 304
    # The ETag is a digest of the body read: a note alone moves it only through `updated_on`, to
    # the second, so a note in the same second answers 304 still; a field's change moves it.
    note = {"issue": {"notes": "moved"}}
    api.put(f"/issues/{issue['id']}.json", json=note).raise_for_status()
    changed = {"issue": {"subject": "Write the page again"}}
    api.put(f"/issues/{issue['id']}.json", json=changed).raise_for_status()
    assert api.get(f"/issues/{issue['id']}.json", headers={"If-None-Match": tag}).status_code == 200


def test_lock_version_is_never_shown_and_a_wrong_one_is_refused_unexplained(
    api: httpx.Client,
) -> None:
    issue = _issue(api, _project(api), subject="Ship it")
    shown = api.get(f"/issues/{issue['id']}.json", params={"include": "journals"}).json()
    assert "lock_version" not in shown["issue"] and "lock_version" not in issue
    stale = api.put(
        f"/issues/{issue['id']}.json", json={"issue": {"notes": "late", "lock_version": 99}}
    )
    assert (stale.status_code, stale.json()) == (422, {"errors": []})  # no word of a conflict
    journals = api.get(f"/issues/{issue['id']}.json", params={"include": "journals"})
    assert journals.json()["issue"]["journals"] == []  # nothing was kept


def test_if_match_is_ignored_and_a_note_is_kept_as_a_journal_with_its_mark(
    api: httpx.Client,
) -> None:
    issue = _issue(api, _project(api), subject="Sign the contract")
    mark = "custodian-mark r20261207T070010Z-7029e2.a1b2c3"
    changed = api.put(
        f"/issues/{issue['id']}.json",
        json={"issue": {"notes": f"Drafted.\n\n{mark}", "status_id": 2}},
        headers={"If-Match": '"no such version"'},
    )
    assert changed.status_code == 204  # made, whatever If-Match said
    read = api.get(f"/issues/{issue['id']}.json", params={"include": "journals"}).json()["issue"]
    [journal] = read["journals"]
    assert mark in journal["notes"] and read["status"]["name"] == "In Progress"
    assert journal["details"][0]["name"] == "status_id"  # a change and its note: one journal


def test_the_same_create_sent_twice_makes_two_issues(api: httpx.Client) -> None:
    project = _project(api)
    key = {"Idempotency-Key": "k-1"}
    for _ in range(2):
        body = {"issue": {"project_id": project, "subject": "Once"}}
        assert api.post("/issues.json", json=body, headers=key).status_code == 201
    listed = api.get("/issues.json", params={"project_id": project, "status_id": "*"}).json()
    assert listed["total_count"] == 2  # no idempotency keys: a mark must be looked for first
