"""Redmine's REST API as the Redmine backend uses it: projects, issues with their journals, and
the trackers, statuses and custom field the mapping names.

A refusal of Redmine's becomes the contract's error answer (`Refused`); a lost connection is left
to rise as httpx raises it, so the contract's client decides about retrying.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from custodian_runtime.core.trackers import redmine as rm
from custodian_runtime.statehub.backends._gateway import Refused, refused_for

Auth = Mapping[str, str]
PAGE = 100  # Redmine's largest page
PAGES = 100  # past 10,000 issues of one list the answer is refused, not cut short


@dataclass(frozen=True)
class Schema:
    """The ids of the trackers, statuses and custom field the mapping names."""

    trackers: Mapping[str, int]  # tracker name -> id
    statuses: Mapping[str, int]  # status name -> id
    field: int  # the `Custodian` custom field's id

    def tracker(self, kind: rm.IssueKind) -> int:
        """The id of `kind`'s tracker."""
        return self.trackers[kind.tracker]

    def kind_of(self, issue: Mapping[str, Any]) -> rm.IssueKind | None:
        """The kind of an issue, by its tracker; None for an issue of another tracker."""
        tracker = (issue.get("tracker") or {}).get("id")
        return next((k for k in rm.KINDS if self.trackers[k.tracker] == tracker), None)


class RedmineRest:
    """One Redmine's REST API, reached through `inner`."""

    def __init__(self, url: str, inner: httpx.BaseTransport) -> None:
        self._http = httpx.Client(base_url=url, transport=inner, trust_env=False)
        self._schema: Schema | None = None

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def get(self, path: str, auth: Auth, params: Mapping[str, Any] | None = None) -> Any:
        """GET a JSON resource."""
        return _json(self._http.get(path, params=dict(params or {}), headers=auth))

    def schema(self, auth: Auth) -> Schema:
        """The mapping's trackers, statuses and field, read once (they are an admin's setup)."""
        if self._schema is None:
            trackers = {t["name"]: t["id"] for t in self.get("/trackers.json", auth)["trackers"]}
            statuses = {
                s["name"]: s["id"] for s in self.get("/issue_statuses.json", auth)["issue_statuses"]
            }
            fields = self.get("/custom_fields.json", auth)["custom_fields"]
            field = next(
                (
                    f["id"]
                    for f in fields
                    if f["name"] == rm.FIELD and f.get("customized_type") == "issue"
                ),
                None,
            )
            missing = [k.tracker for k in rm.KINDS if k.tracker not in trackers]
            missing += [f"status {n}" for n in rm.STATUS_NAMES if n not in statuses]
            missing += [] if field is not None else [f"issue custom field {rm.FIELD}"]
            if missing:
                raise Refused(
                    503,
                    "this Redmine lacks what Custodian maps onto: "
                    + ", ".join(missing)
                    + " (docs/trackers.md says how to make them)",
                    "unavailable",
                )
            assert field is not None
            self._schema = Schema(trackers, statuses, int(field))
        return self._schema

    def project(self, identifier: str, auth: Auth) -> dict[str, Any] | None:
        """A project by its identifier, or None when there is none."""
        response = self._http.get(f"/projects/{identifier}.json", headers=auth)
        if response.status_code == 404:
            return None
        found: dict[str, Any] = _json(response)["project"]
        return found

    def projects(self, auth: Auth) -> list[dict[str, Any]]:
        """Every project the user sees."""
        return self._pages("/projects.json", "projects", auth, {})

    def create_project(self, identifier: str, tracker_ids: list[int], auth: Auth) -> None:
        """A project for a domain, with the mapping's trackers and issue tracking only."""
        body = {
            "project": {
                "name": identifier,
                "identifier": identifier,
                "tracker_ids": tracker_ids,
                "enabled_module_names": ["issue_tracking"],
                "is_public": False,
            }
        }
        _json(self._http.post("/projects.json", json=body, headers=auth))

    def issues(self, auth: Auth, **where: Any) -> list[dict[str, Any]]:
        """Every issue matching `where` (Redmine's filters), open or closed, oldest first."""
        params = {"status_id": "*", "sort": "id", **where}
        return self._pages("/issues.json", "issues", auth, params)

    def issue(self, number: str, auth: Auth) -> dict[str, Any]:
        """One issue with its journals."""
        params = {"include": "journals"}
        found: dict[str, Any] = self.get(f"/issues/{number}.json", auth, params)["issue"]
        return found

    def create_issue(self, values: Mapping[str, Any], auth: Auth) -> str:
        """POST an issue; its number."""
        made = _json(self._http.post("/issues.json", json={"issue": dict(values)}, headers=auth))
        return str(made["issue"]["id"])

    def update_issue(self, number: str, values: Mapping[str, Any], auth: Auth) -> None:
        """PUT changes (and a note) to an issue: one journal."""
        response = self._http.put(
            f"/issues/{number}.json", json={"issue": dict(values)}, headers=auth
        )
        if response.status_code >= 400:
            raise _refusal(response)

    def _pages(
        self, path: str, name: str, auth: Auth, params: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for index in range(PAGES):
            page = {**params, "limit": PAGE, "offset": index * PAGE}
            data = self.get(path, auth, page)
            found += data.get(name, [])
            if len(found) >= int(data.get("total_count", 0)) or not data.get(name):
                return found
        raise Refused(503, f"more than {PAGE * PAGES} {name} match; read no more", "unavailable")


def _json(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise _refusal(response)
    return response.json() if response.content else {}


def _refusal(response: httpx.Response) -> Refused:
    try:
        errors = response.json().get("errors") or []
        message = "; ".join(str(e) for e in errors) or "(no reason given)"
    except (ValueError, AttributeError):
        message = response.text[:200]
    detail = f"Redmine answered {response.status_code}: {message}"
    return refused_for(response, detail, "give an admin's API key in the URL: KEY@host")
