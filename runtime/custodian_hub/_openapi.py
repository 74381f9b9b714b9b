"""The OpenAPI 3.1 document of the contract, built from the table of endpoints and the pydantic
models."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from custodian_hub._routes import MAX_EVENT_LIMIT, MAX_SUMMARY_EVENTS, Endpoint
from custodian_hub._wire import IF_MATCH_PATTERN, IF_NONE_MATCH_PATTERN
from custodian_runtime import __version__
from custodian_runtime.core import contract

_REF = "#/components/schemas/{model}"

_ID_SCHEMA = {"type": "string", "pattern": contract.ID_PATTERN}
_PARAMETER_SCHEMAS: dict[str, dict[str, Any]] = {
    "domain": {"type": "string", "pattern": contract.DOMAIN_PATTERN},
    "workstream_id": _ID_SCHEMA,
    "task_id": _ID_SCHEMA,
    "flag_id": _ID_SCHEMA,
    "decision_id": _ID_SCHEMA,
    "status": {"type": "string", "enum": ["open", "resolved"]},
    "events": {"type": "integer", "minimum": 0, "maximum": MAX_SUMMARY_EVENTS, "default": 50},
    "limit": {"type": "integer", "minimum": 0, "maximum": MAX_EVENT_LIMIT, "default": 100},
}

_ERRORS: dict[str, str] = {
    "400": "Body is not JSON, or a query parameter or header is malformed",
    "401": "Token missing or wrong",
    "404": "Unknown route, domain or id",
    "405": "Method not allowed on this path",
    "409": "The write contradicts current state",
    "422": "Body fails validation (validation_error) or key reused (idempotency_mismatch)",
    "429": "Too many requests; Retry-After is set",
    "503": "Temporarily unavailable; Retry-After may be set",
}

_IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": 'v1.1: the task version the write expects, quoted ("3"); 412 when it differs',
    "schema": {"type": "string", "pattern": IF_MATCH_PATTERN},
}

_IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": 'v1.2: a domain revision seen before, quoted ("7"); 304 while it is current',
    "schema": {"type": "string", "pattern": IF_NONE_MATCH_PATTERN},
}

_REVISION_ETAG = {
    "ETag": {
        "description": 'v1.2: the domain\'s revision, quoted ("7")',
        "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
        "required": True,
    }
}

_NOT_MODIFIED = {
    "description": "v1.2: the domain is still at the revision If-None-Match names; no body",
    "headers": _REVISION_ETAG,
}

_ETAG = {
    "ETag": {
        "description": 'v1.1: the task\'s version, quoted ("3")',
        "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
    }
}

_PRECONDITION_FAILED = {
    "description": "If-Match names another version; `current` is the task as it is now",
    "headers": _ETAG,
    "content": {
        "application/json": {
            "schema": {
                "allOf": [
                    {"$ref": _REF.format(model="ErrorBody")},
                    {
                        "type": "object",
                        "properties": {"current": {"$ref": _REF.format(model="Task")}},
                        "required": ["current"],
                    },
                ]
            }
        }
    },
}

_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "1-255 printable ASCII characters; a repeat within 24 h is replayed",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$"},
}


@functools.cache
def _document(endpoints: tuple[Endpoint, ...]) -> dict[str, Any]:
    models = {m for e in endpoints for m in (e.answer, e.request) if m is not None}
    models.add(contract.ErrorBody)
    _, defs = models_json_schema(
        [(model, "validation") for model in sorted(models, key=lambda m: m.__name__)],
        ref_template=_REF,
    )
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "State-hub API (reference hub)",
            "version": __version__,
            "description": "Contract v1.2 of the state-hub, served by the Custodian reference hub.",
        },
        "paths": paths,
        "components": {
            "schemas": _hub_schemas(defs.get("$defs", {})),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }


def _hub_schemas(schemas: dict[str, Any]) -> dict[str, Any]:
    # The client's Task tolerates a v1 hub without `version`; this hub always sends one.
    task = schemas["Task"]
    task["properties"]["version"] = {"type": "integer", "minimum": 1, "title": "Version"}
    task["required"] = [*task["required"], "version"]
    # v1.2: the client tolerates a v1.1 hub without them; this hub always sends them.
    _always(schemas, "Health", "hub_id", {"type": "string", "pattern": contract.ID_PATTERN})
    _always(schemas, "StateSummary", "hub_id", {"type": "string", "pattern": contract.ID_PATTERN})
    for model in ("DomainOverview", "DomainSummary"):
        _always(schemas, model, "revision", {"type": "integer", "minimum": 0})
    return schemas


def _always(schemas: dict[str, Any], model: str, name: str, schema: dict[str, Any]) -> None:
    entry = schemas[model]
    entry["properties"][name] = {**schema, "title": name.replace("_", " ").title()}
    entry["required"] = [*entry.get("required", []), name]


def openapi_document(endpoints: Sequence[Endpoint]) -> dict[str, Any]:
    """The contract of `endpoints` as an OpenAPI 3.1 document (a fresh copy the caller may
    change)."""
    return copy.deepcopy(_document(tuple(endpoints)))


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    model, status, summary = endpoint.answer, endpoint.status, endpoint.summary
    content: dict[str, Any] = {"type": "object"} if model is None else _ref(model)
    success: dict[str, Any] = {
        "description": summary,
        "content": {"application/json": {"schema": content}},
    }
    if endpoint.versioned:
        success["headers"] = _ETAG
    responses: dict[str, Any] = {str(status): success}
    for code, text in _ERRORS.items():
        responses[code] = {
            "description": text,
            "content": {"application/json": {"schema": _ref(contract.ErrorBody)}},
        }
    if endpoint.if_match:
        responses["412"] = _PRECONDITION_FAILED
    if endpoint.revisioned:
        success["headers"] = _REVISION_ETAG
        responses["304"] = _NOT_MODIFIED
    operation: dict[str, Any] = {
        "operationId": endpoint.name,
        "summary": summary,
        "parameters": _parameters(endpoint),
        "responses": responses,
    }
    if endpoint.public:
        operation["security"] = []
    if endpoint.request is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(endpoint.request)}},
        }
    return operation


def _parameters(endpoint: Endpoint) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        # A path parameter is an id, or the domain (as `_routes` reads it).
        {"name": name, "in": "path", "required": True, "schema": _path_schema(name)}
        for name in re.findall(r"\{(\w+)\}", endpoint.path)
    ]
    params += [
        {"name": name, "in": "query", "required": False, "schema": _PARAMETER_SCHEMAS[name]}
        for name in endpoint.query
    ]
    if endpoint.if_match:
        params.append(_IF_MATCH)
    if endpoint.revisioned:
        params.append(_IF_NONE_MATCH)
    if endpoint.is_write:
        params.append(_IDEMPOTENCY_KEY)
    return params


def _path_schema(name: str) -> dict[str, Any]:
    return _PARAMETER_SCHEMAS["domain"] if name == "domain" else _ID_SCHEMA


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": _REF.format(model=model.__name__)}
