"""Fuzz every operation of the hub's own OpenAPI document: no input may produce a 5xx.

Bodies come from the request schemas (mostly valid, sometimes with an extra field), from
arbitrary JSON, or are raw bytes; path and query parameters are valid, known or junk. The run is
derandomized and bounded (about 300 requests) so that it is fast and repeatable.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HUB_NOW
from custodian_hub import demo_dataset
from custodian_runtime.core.contract import ID_PATTERN

REQUESTS_PER_OPERATION = 18
ODD_METHODS = ("PUT", "DELETE", "OPTIONS", "TRACE", "PROPFIND")
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
ANY_JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def mostly(usual: st.SearchStrategy[Any], *rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` about four times in five, otherwise one of `rare`."""
    # one_of() is no weighting tool (it merges repeated branches); sampled_from() draws evenly.
    pick_usual = st.sampled_from((True, True, True, True, False))
    return pick_usual.flatmap(lambda common: usual if common else st.one_of(*rare))


def known_ids() -> list[str]:
    demo = demo_dataset(HUB_NOW)
    return [item["id"] for kind in demo.values() for item in kind] + ["website", "platform"]


KNOWN = st.sampled_from(known_ids())


def from_schema(schema: dict[str, Any], components: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy for values of a (pydantic-made) JSON schema; mostly valid, never exhaustive."""
    if "$ref" in schema:
        return from_schema(components[schema["$ref"].rsplit("/", 1)[1]], components)
    if "anyOf" in schema and "properties" not in schema:  # NewFlag's anyOf only adds `required`
        return st.one_of([from_schema(option, components) for option in schema["anyOf"]])
    if "enum" in schema:
        return mostly(st.sampled_from(schema["enum"]), st.text(max_size=10))
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "object":
        return _object(schema, components)
    if kind == "array":
        item = from_schema(schema.get("items", {}), components)
        return st.lists(item, max_size=min(schema.get("maxItems", 4), 4))
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
    if kind == "null":
        return st.none()
    return ANY_JSON


def _string(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if schema.get("format") == "date":
        return st.dates().map(str) | st.text(max_size=12)
    if schema.get("pattern") == ID_PATTERN:
        return mostly(KNOWN, st.from_regex(ID_PATTERN, fullmatch=True))
    if "pattern" in schema:
        return mostly(KNOWN, st.from_regex(schema["pattern"], fullmatch=True), st.text(max_size=8))
    low, high = schema.get("minLength", 0), schema.get("maxLength", 300)
    too_long = st.just("x" * (high + 1))
    return mostly(st.text(min_size=low, max_size=min(high, 300)), too_long)


def _object(schema: dict[str, Any], components: dict[str, Any]) -> st.SearchStrategy[Any]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or draw(st.booleans()):
                body[name] = draw(from_schema(sub, components))
        if draw(mostly(st.just(False), st.just(True))):
            body[draw(st.text(min_size=1, max_size=6))] = draw(JSON_SCALARS)
        return body

    return build()


def param_value(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    valid: st.SearchStrategy[Any]
    if schema.get("type") == "integer":
        valid = st.integers(schema["minimum"], schema["maximum"]) | st.integers()
    elif "enum" in schema:
        valid = st.sampled_from(schema["enum"])
    else:
        valid = KNOWN | st.from_regex(schema["pattern"], fullmatch=True)
    return valid.map(str) | st.text(max_size=12)


def test_no_input_makes_the_hub_fail(hub_url: str) -> None:
    with httpx.Client(base_url=hub_url, timeout=10.0) as client:
        doc = client.get("/openapi.json").json()
        components = doc["components"]["schemas"]
        operations = [
            (m.upper(), p, op) for p, item in doc["paths"].items() for m, op in item.items()
        ]
        statuses: Counter[int] = Counter()
        for method, template, operation in operations:
            fuzz_operation(client, method, template, operation, components, statuses)
    assert len(operations) == 17
    # Hypothesis may stop early on an operation whose inputs it has exhausted.
    assert statuses.total() >= 15 * REQUESTS_PER_OPERATION, statuses
    print(f"fuzz: {statuses.total()} requests, statuses {dict(sorted(statuses.items()))}")
    # The bodies reach past validation: writes succeed, and are refused for every reason.
    assert {200, 201, 400, 404, 405, 422} <= set(statuses), statuses


def fuzz_operation(
    client: httpx.Client,
    method: str,
    template: str,
    operation: dict[str, Any],
    components: dict[str, Any],
    statuses: Counter[int],
) -> None:
    params = operation.get("parameters", [])
    body_schema = operation.get("requestBody", {}).get("content", {}).get("application/json")
    body_strategy: st.SearchStrategy[bytes] = st.binary(max_size=40) | ANY_JSON.map(_encode)
    if body_schema is not None:
        # Three parts schema-shaped to one part junk, so that writes get past validation.
        shaped = from_schema(body_schema["schema"], components).map(_encode)
        body_strategy = mostly(shaped, body_strategy)

    @settings(
        max_examples=REQUESTS_PER_OPERATION,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def one_request(data: st.DataObject) -> None:
        path = template
        query: dict[str, str] = {}
        headers: dict[str, str] = {"Content-Type": "application/json"}
        for param in params:
            if param["in"] == "path":
                value = data.draw(param_value(param["schema"]))
                path = path.replace("{" + param["name"] + "}", quote(value, safe=""))
            elif param["in"] == "query" and data.draw(st.booleans()):
                query[param["name"]] = data.draw(param_value(param["schema"]))
            elif param["in"] == "header" and data.draw(st.booleans()):
                headers[param["name"]] = data.draw(
                    st.from_regex(r"[!-~]([ -~]{0,38}[!-~])?", fullmatch=True)
                )
        if data.draw(mostly(st.just(False), st.just(True))):
            query[data.draw(st.text(min_size=1, max_size=6))] = data.draw(st.text(max_size=6))
        content = data.draw(body_strategy) if body_schema is not None else None
        # Hypothesis favours the first choice: mostly the documented method, sometimes another.
        verb = data.draw(mostly(st.just(method), st.sampled_from(ODD_METHODS)))
        response = client.request(verb, path, params=query, content=content, headers=headers)
        statuses[response.status_code] += 1
        assert response.status_code < 500, (method, path, query, content, response.text)
        body = response.json()
        if response.status_code == 412:  # v1.1: a 412 also carries the task as it is now
            assert set(body) == {"detail", "code", "current"}, body
        elif response.status_code >= 400:
            assert set(body) == {"detail", "code"}, body

    one_request()


def _encode(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")
