"""The route table of the contract and the parsing of path and query parameters."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

from custodian_hub._wire import ApiError
from custodian_runtime.core.contract import DOMAIN_PATTERN, ID_PATTERN

_ID = re.compile(ID_PATTERN)
_DOMAIN = re.compile(DOMAIN_PATTERN)
_INTEGER = re.compile(r"^[0-9]{1,9}$")
MAX_QUERY_FIELDS = 20
MAX_SUMMARY_EVENTS = 500
MAX_EVENT_LIMIT = 1000

QueryParser = Callable[[str, str], Any]
QueryParsers = Mapping[str, QueryParser]


def id_value(name: str, raw: str) -> str:
    """A query parameter that names an id."""
    if not _ID.fullmatch(raw):
        raise ApiError(400, f"query parameter {name} must match {ID_PATTERN}")
    return raw


def domain_value(name: str, raw: str) -> str:
    """A query parameter that names a domain."""
    if not _DOMAIN.fullmatch(raw):
        raise ApiError(400, f"query parameter {name} must match {DOMAIN_PATTERN}")
    return raw


def status_value(name: str, raw: str) -> str:
    """The status filter of flags and decisions."""
    if raw not in ("open", "resolved"):
        raise ApiError(400, f"query parameter {name} must be 'open' or 'resolved', not {raw!r}")
    return raw


def bounded_int(maximum: int) -> QueryParser:
    """A parser of a whole number from 0 to `maximum`."""

    def parse(name: str, raw: str) -> int:
        if not _INTEGER.fullmatch(raw) or int(raw) > maximum:
            raise ApiError(400, f"query parameter {name} must be a whole number 0-{maximum}")
        return int(raw)

    return parse


@dataclass(frozen=True)
class Route:
    """One operation of the contract: method, path pattern and accepted query parameters."""

    name: str
    method: str
    path: str
    query: QueryParsers = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The path template as a regular expression with one group per `{param}`."""
        return _compile(self.path)

    @property
    def is_write(self) -> bool:
        """POST and PATCH write; everything else reads."""
        return self.method in ("POST", "PATCH")


_FILTERS: QueryParsers = {"domain": domain_value, "status": status_value}

ROUTES: tuple[Route, ...] = (
    Route("health", "GET", "/health"),
    Route("openapi", "GET", "/openapi.json"),
    Route("state_summary", "GET", "/state/summary"),
    Route(
        "domain_summary",
        "GET",
        "/domains/{domain}/summary",
        {"events": bounded_int(MAX_SUMMARY_EVENTS)},
        {"events": 50},
    ),
    Route("get_task", "GET", "/tasks/{task_id}"),
    Route(
        "list_events",
        "GET",
        "/events",
        {
            "domain": domain_value,
            "workstream_id": id_value,
            "task_id": id_value,
            "limit": bounded_int(MAX_EVENT_LIMIT),
        },
        {"domain": None, "workstream_id": None, "task_id": None, "limit": 100},
    ),
    Route("list_flags", "GET", "/flags", _FILTERS, {"domain": None, "status": None}),
    Route("list_decisions", "GET", "/decisions", _FILTERS, {"domain": None, "status": None}),
    Route("list_workstreams", "GET", "/workstreams", {"domain": domain_value}, {"domain": None}),
    Route("add_event", "POST", "/events"),
    Route("update_task_status", "PATCH", "/tasks/{task_id}"),
    Route("add_flag", "POST", "/flags"),
    Route("resolve_flag", "PATCH", "/flags/{flag_id}"),
    Route("create_workstream", "POST", "/workstreams"),
    Route("create_task", "POST", "/tasks"),
    Route("create_decision", "POST", "/decisions"),
    Route("resolve_decision", "POST", "/decisions/{decision_id}/resolve"),
)

_COMPILED: dict[str, re.Pattern[str]] = {}


def _compile(template: str) -> re.Pattern[str]:
    if template not in _COMPILED:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
        _COMPILED[template] = re.compile(f"^{regex}$")
    return _COMPILED[template]


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for a request, with its path parameters; 404 or 405 when there is none."""
    allowed: list[str] = []
    lookup_method = "GET" if method == "HEAD" else method
    for route in ROUTES:
        found = route.pattern.match(path)
        if found is None:
            continue
        if route.method != lookup_method:
            allowed.append(route.method)
            continue
        return route, _path_params(found.groupdict())
    if allowed:
        allow = ", ".join(sorted({*allowed, *(["HEAD"] if "GET" in allowed else [])}))
        raise ApiError(
            405, f"{method} is not allowed on {path}; allowed: {allow}", headers={"Allow": allow}
        )
    raise ApiError(404, f"no route {path!r}; GET /openapi.json lists every route")


def _path_params(raw: dict[str, str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, value in raw.items():
        try:
            decoded = unquote(value, errors="strict")
        except UnicodeDecodeError as exc:
            raise ApiError(404, f"no {name} matching {value!r}") from exc
        pattern = _DOMAIN if name == "domain" else _ID
        if not pattern.fullmatch(decoded):
            noun = name.removesuffix("_id")
            raise ApiError(404, f"no {noun} named {decoded!r}")
        params[name] = decoded
    return params


def query_params(route: Route, raw_query: str) -> dict[str, Any]:
    """The route's query parameters parsed; an unknown, repeated or malformed one is a 400."""
    try:
        pairs = parse_qsl(
            raw_query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS, errors="strict"
        )
    except (ValueError, UnicodeError) as exc:
        raise ApiError(400, f"the query string cannot be read: {exc}") from exc
    values = dict(route.defaults)
    seen: set[str] = set()
    for name, raw in pairs:
        if name not in route.query:
            known = ", ".join(sorted(route.query)) or "none"
            raise ApiError(400, f"unknown query parameter {name!r}; this route takes: {known}")
        if name in seen:
            raise ApiError(400, f"query parameter {name} is given more than once")
        seen.add(name)
        # An empty value is no value: the OpenAPI document's patterns forbid it, and reading it
        # as "no filter" would answer every domain's data to `?domain=`.
        if raw == "":
            raise ApiError(400, f"query parameter {name} is empty; leave it out for no filter")
        values[name] = route.query[name](name, raw)
    return values
