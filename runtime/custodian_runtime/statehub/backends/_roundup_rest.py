"""Roundup's REST API as the Roundup backend uses it: lists, items, creates and guarded changes.

Every change carries `If-Match` with the item's ETag, as Roundup requires; a stale one answers
412 (`EtagStale`). A refusal of the tracker becomes the contract's error answer (`Refused`); a lost
connection is left to rise as httpx raises it, so the contract's client decides about retrying.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from custodian_runtime.core.trackers.roundup import Item, Kind
from custodian_runtime.statehub.backends._gateway import Refused, refused_for

PAGE = 500  # items a request reads
PAGES = 20  # pages a list reads: past 10,000 items of a class the answer is refused, not cut short


class EtagStale(Exception):
    """Roundup answered 412: the item changed since its ETag was read."""


class RoundupRest:
    """One tracker's REST API, reached through `http` (its base URL is the tracker's)."""

    def __init__(self, url: str, inner: httpx.BaseTransport) -> None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        # Roundup's CSRF checks: the tracker's own origin and referer, and X-Requested-With.
        headers = {"X-Requested-With": "rest", "Origin": origin, "Referer": f"{url}/"}
        self._http = httpx.Client(
            base_url=f"{url}/rest", transport=inner, headers=headers, trust_env=False
        )

    def close(self) -> None:
        """Close the tracker's connection pool."""
        self._http.close()

    def root(self, auth: Mapping[str, str]) -> dict[str, Any]:
        """GET /rest: the API's versions (answered to anyone)."""
        return self._json(self._http.get("", headers=auth))

    def items(
        self, kind: Kind, auth: Mapping[str, str], where: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Every item of `kind` whose properties match `where` (Roundup's own matching), read
        a page of PAGE at a time, at most PAGES pages."""
        found: list[dict[str, Any]] = []
        for index in range(1, PAGES + 1):
            data = self._page(kind, auth, PAGE, {**(where or {}), "@page_index": str(index)})
            found += [dict(item) for item in data.get("collection", ())]
            if len(found) >= int(data.get("@total_size", 0)):
                return found
        raise Refused(
            503,
            f"more than {PAGE * PAGES} {kind.klass} items match; the Roundup backend reads no more",
            "unavailable",
        )

    def first(
        self, kind: Kind, auth: Mapping[str, str], where: Mapping[str, str], size: int
    ) -> tuple[list[dict[str, Any]], int]:
        """The first `size` items of `kind` matching `where` (in its `@sort` order), and how
        many match in all."""
        data = self._page(kind, auth, max(size, 1), where)
        items = [dict(item) for item in data.get("collection", ())]
        return items[:size], int(data.get("@total_size", 0))

    def _page(
        self, kind: Kind, auth: Mapping[str, str], size: int, where: Mapping[str, str]
    ) -> dict[str, Any]:
        params = {"@fields": ",".join(kind.fields), "@page_size": str(size), **where}
        return self._json(self._http.get(f"/data/{kind.klass}", params=params, headers=auth))

    def item(self, kind: Kind, number: str, auth: Mapping[str, str]) -> tuple[Item, str]:
        """One item's properties (with its id), and the ETag a change of it must carry."""
        params = {"@fields": ",".join(kind.fields), "@verbose": "0"}
        response = self._http.get(f"/data/{kind.klass}/{number}", params=params, headers=auth)
        data = self._json(response)
        return {"id": data["id"], **data.get("attributes", {})}, str(data["@etag"])

    def create(self, kind: Kind, values: Mapping[str, Any], auth: Mapping[str, str]) -> str:
        """POST a new item; its number."""
        response = self._http.post(f"/data/{kind.klass}", json=_present(values), headers=auth)
        return str(self._json(response)["id"])

    def change(
        self, kind: Kind, number: str, etag: str, values: Mapping[str, Any], auth: Mapping[str, str]
    ) -> dict[str, Any]:
        """PUT the changed properties under `If-Match: etag`; the properties Roundup changed."""
        headers = {**auth, "If-Match": etag}
        response = self._http.put(f"/data/{kind.klass}/{number}", json=values, headers=headers)
        if response.status_code == 412:
            raise EtagStale(f"{kind.klass}{number} changed since it was read")
        return dict(self._json(response).get("attribute", {}))

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise _refusal(response)
        body = response.json()
        data: dict[str, Any] = body.get("data", {})
        return data


def _present(values: Mapping[str, Any]) -> dict[str, Any]:
    # Roundup takes an empty string for "no value" and refuses it; absent is the same, and taken.
    return {name: value for name, value in values.items() if value not in (None, "")}


def _refusal(response: httpx.Response) -> Refused:
    try:
        message = str(response.json()["error"]["msg"])
    except (ValueError, KeyError, TypeError):
        message = response.text[:200]
    detail = f"the tracker answered {response.status_code}: {message}"
    return refused_for(response, detail, "give the tracker's user in the URL: user:password@")
