"""Loopback fake model providers: stdlib HTTP servers that speak each vendor's API.

    with FakeProvider("anthropic", key="sk-test") as fake:
        env = {"ANTHROPIC_API_KEY": "sk-test"}
        model = build_model(ModelConfig(spec="anthropic", base_url=fake.url, env=env))

Each server answers a fixed Markdown response (or `answer(request_body)`), shaped as the vendor's
documentation shows, after first playing any scripted `Reply`s (e.g. a 429 to exercise retries).
It records every request it receives. Kinds: anthropic, openai, openrouter, gemini, ollama,
openai-compatible.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

FAKE_ANSWER = """## Assessment

Nothing here needs the custodian's hand today.

```json
{"observations": ["answered by a fake provider"], "progress_events": [], "tasks_to_update": [],
 "tasks_to_flag": [], "proposals": []}
```
"""

Answer = str | Callable[[dict[str, Any]], str]
_GEMINI_PATH = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):generateContent$")


@dataclass(frozen=True)
class Reply:
    """A scripted HTTP reply played before the normal answer."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _usage_openai(cost: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375}
    if cost:
        usage["cost"] = 0.00123
    return usage


def _chat(model: str, text: str, *, cost: bool) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake-1",
        "object": "chat.completion",
        "created": 1747000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage_openai(cost),
    }


def _messages(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "msg_fake_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 321, "output_tokens": 54},
    }


def _generate(model: str, text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 321,
            "candidatesTokenCount": 54,
            "totalTokenCount": 375,
        },
        "modelVersion": model,
        "responseId": "fake-response-1",
    }


@dataclass(frozen=True)
class _Dialect:
    path: str  # the endpoint path, relative to the server root
    base: str  # what to append to the server root to get the adapter's base URL
    auth_header: str
    auth_prefix: str


_DIALECTS = {
    "anthropic": _Dialect("/v1/messages", "", "x-api-key", ""),
    "openai": _Dialect("/v1/chat/completions", "/v1", "authorization", "Bearer "),
    "openrouter": _Dialect("/api/v1/chat/completions", "/api/v1", "authorization", "Bearer "),
    "gemini": _Dialect("", "", "x-goog-api-key", ""),
    "ollama": _Dialect("/v1/chat/completions", "/v1", "authorization", "Bearer "),
    "openai-compatible": _Dialect("/v1/chat/completions", "/v1", "authorization", "Bearer "),
}


class FakeProvider:
    """A vendor API on 127.0.0.1 (ephemeral port); `url` is the base URL to configure."""

    def __init__(
        self,
        kind: str,
        *,
        answer: Answer = FAKE_ANSWER,
        key: str | None = None,
        replies: tuple[Reply, ...] = (),
    ) -> None:
        if kind not in _DIALECTS:
            raise ValueError(f"unknown fake provider {kind!r}; use one of {sorted(_DIALECTS)}")
        self.kind = kind
        self.answer = answer
        self.key = key
        self.requests: list[Recorded] = []
        self._dialect = _DIALECTS[kind]
        self._replies = list(replies)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval keeps `stop()` quick; the default 0.5 s adds up across tests.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def root(self) -> str:
        """The server's root URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The base URL an adapter should be given (CUSTODIAN_LLM_BASE_URL)."""
        return self.root + self._dialect.base

    def start(self) -> FakeProvider:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def respond(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        """The reply to one request: scripted first, then auth and path checks, then the answer."""
        with self._lock:
            self.requests.append(Recorded("POST", path, headers, body))
            scripted = self._replies.pop(0) if self._replies else None
        if scripted is not None:
            return scripted
        if self.key is not None and headers.get(self._dialect.auth_header) != (
            self._dialect.auth_prefix + self.key
        ):
            return self._error(401, "authentication_error", "invalid API key")
        model = self._model_for(path, body)
        if model is None:
            return self._error(404, "not_found_error", f"no such endpoint: {path}")
        text = self.answer(body) if callable(self.answer) else self.answer
        return Reply(200, self._success(model, text), {"x-request-id": "req_fake_1"})

    def _model_for(self, path: str, body: dict[str, Any]) -> str | None:
        if self.kind == "gemini":
            match = _GEMINI_PATH.match(path)
            return match.group("model") if match else None
        return str(body.get("model", "")) if path == self._dialect.path else None

    def _success(self, model: str, text: str) -> dict[str, Any]:
        if self.kind == "anthropic":
            return _messages(model, text)
        if self.kind == "gemini":
            return _generate(model, text)
        return _chat(model, text, cost=self.kind == "openrouter")

    def _error(self, status: int, kind: str, message: str) -> Reply:
        if self.kind == "anthropic":
            return Reply(status, {"type": "error", "error": {"type": kind, "message": message}})
        if self.kind == "gemini":
            return Reply(status, {"error": {"code": status, "message": message, "status": kind}})
        if self.kind == "openrouter":
            return Reply(status, {"error": {"code": status, "message": message}})
        return Reply(
            status, {"error": {"message": message, "type": kind, "param": None, "code": None}}
        )


def _handler_for(fake: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_invalid_json": raw.decode("utf-8", "replace")}
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = fake.respond(self.path, headers, body if isinstance(body, dict) else {})
            payload = json.dumps(reply.body).encode("utf-8")
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: tests read `fake.requests` instead of logs."""

    return Handler


class SchemaAnswer:
    """An `answer` that honours `response_format` as llama.cpp's server does.

    Without `response_format` the answer is `fenced` (Markdown and one json block). With
    `{"type": "json_schema", "json_schema": {"schema": ...}}` the reply is what a grammar built
    from that schema lets out: one bare JSON object, made by `fill(schema)` and checked against
    the schema, so an answer the schema does not allow, or a schema that is no JSON schema, fails
    the test instead of passing as text. Each schema it was given is kept in `schemas`.
    """

    def __init__(self, fill: Callable[[dict[str, Any]], dict[str, Any]], fenced: str = FAKE_ANSWER):
        self.fill = fill
        self.fenced = fenced
        self.schemas: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        import jsonschema

        asked = body.get("response_format")
        if asked is None:
            return self.fenced
        if asked.get("type") != "json_schema" or "schema" not in asked.get("json_schema", {}):
            raise ValueError(f"llama.cpp takes json_schema with a schema, not {asked!r}")
        schema = asked["json_schema"]["schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        self.schemas.append(schema)
        document = self.fill(schema)
        jsonschema.validate(document, schema)
        return json.dumps(document)
