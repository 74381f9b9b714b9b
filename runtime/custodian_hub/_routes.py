"""What an endpoint of the contract is, how a request finds its endpoint, and the parsing of
path and query parameters. The table of endpoints itself is `_endpoints.py`."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

from pydantic import BaseModel

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
class Reading:
    """What a read endpoint answers from: a read transaction, the request's path and query
    parameters, and the hub's clock now as the contract writes it."""

    conn: sqlite3.Connection
    params: Mapping[str, str]
    query: Mapping[str, Any]
    generated_at: str


# (write transaction, now as stored, the validated body, the path params and conditions).
WriteFunction = Callable[..., tuple[int, dict[str, Any]]]
Reader = Callable[[Reading], Any]


@dataclass(frozen=True, eq=False)
class Endpoint:
    """One endpoint of the contract: how the hub routes, answers and documents it (OpenAPI)."""

    name: str  # its OpenAPI operationId
    method: str
    path: str
    summary: str
    answer: type[BaseModel] | None  # the model of a success's body; None: a free-form object
    status: int = 200
    request: type[BaseModel] | None = None  # a write's body
    write: WriteFunction | None = None  # a write, inside the store's write transaction
    read: Reader | None = None  # a read, inside a read transaction
    about: Callable[[str], Any] | None = None  # an answer about the hub itself, of its hub id
    query: QueryParsers = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    versioned: bool = False  # answers a task: its version as `ETag` (v1.1)
    if_match: bool = False  # honours `If-Match` on the task's version; 412 otherwise (v1.1)
    revisioned: bool = False  # one domain's, with its revision as `ETag`; 304 (v1.2)
    public: bool = False  # answered without the token

    def __post_init__(self) -> None:
        answers = [k for k in ("read", "write", "about") if getattr(self, k) is not None]
        wanted = [["write"]] if self.is_write else [["read"], ["about"]]
        if answers not in wanted:
            how = "`write`" if self.is_write else "`read` or `about`"
            raise ValueError(f"endpoint {self.name}: a {self.method} answers by {how} alone")
        if self.is_write and self.request is None:
            raise ValueError(f"endpoint {self.name}: a write needs its `request` model")

    @property
    def pattern(self) -> re.Pattern[str]:
        """The path template as a regular expression with one group per `{param}`."""
        return _compile(self.path)

    @property
    def is_write(self) -> bool:
        """POST and PATCH write; everything else reads."""
        return self.method in ("POST", "PATCH")


_COMPILED: dict[str, re.Pattern[str]] = {}


def _compile(template: str) -> re.Pattern[str]:
    if template not in _COMPILED:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
        _COMPILED[template] = re.compile(f"^{regex}$")
    return _COMPILED[template]


def match(method: str, path: str, endpoints: Sequence[Endpoint]) -> tuple[Endpoint, dict[str, str]]:
    """The endpoint for a request, with its path parameters; 404 or 405 when there is none."""
    allowed: list[str] = []
    lookup_method = "GET" if method == "HEAD" else method
    for route in endpoints:
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


def query_params(route: Endpoint, raw_query: str) -> dict[str, Any]:
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
