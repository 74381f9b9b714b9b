"""Hole 7: the hub's answer is checked. A summary of another domain is refused before deciding.

A loopback proxy stands in front of the real reference hub and rewrites the answer to
`GET /domains/website/summary`. The run must exit 3 without calling the model, and nothing may
reach the hub but reads.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.observation import check_domain_summary
from custodian_runtime.errors import HubError, ObservationRejected
from support.runs import CANON, hub_get, plan_response, run_cli

Rewrite = Callable[[dict[str, Any], ReferenceHub], dict[str, Any]]
SUMMARY = "/domains/website/summary"


class Proxy:
    """Forwards every request to the hub; rewrites the website summary; records every method."""

    def __init__(self, hub: ReferenceHub, rewrite: Rewrite) -> None:
        self.hub, self.rewrite = hub, rewrite
        self.methods: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.forward(self)

            do_POST = do_PATCH = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        self.methods.append(handler.command)
        length = int(handler.headers.get("Content-Length", "0"))
        body = handler.rfile.read(length) if length else None
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host",)}
        answer = httpx.request(
            handler.command, self.hub.url + handler.path, headers=headers, content=body
        )
        payload = answer.content
        if handler.path.split("?")[0] == SUMMARY and answer.status_code == 200:
            payload = json.dumps(self.rewrite(answer.json(), self.hub)).encode()
        handler.send_response(answer.status_code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


@pytest.fixture
def proxied(small_hub: ReferenceHub) -> Iterator[Callable[[Rewrite], Proxy]]:
    started: list[Proxy] = []

    def start(rewrite: Rewrite) -> Proxy:
        proxy = Proxy(small_hub, rewrite)
        proxy.thread.start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.server.shutdown()
        proxy.server.server_close()


def platform_data(summary: dict[str, Any], hub: ReferenceHub) -> dict[str, Any]:
    return dict(hub_get(hub, "/domains/platform/summary"))


def platform_relabelled(summary: dict[str, Any], hub: ReferenceHub) -> dict[str, Any]:
    return {**platform_data(summary, hub), "domain": "website"}


def duplicate_task(summary: dict[str, Any], hub: ReferenceHub) -> dict[str, Any]:
    changed = copy.deepcopy(summary)
    tasks = changed["workstreams"][0]["tasks"]
    tasks.append({**tasks[0], "status": "todo"})
    return changed


def foreign_task(summary: dict[str, Any], hub: ReferenceHub) -> dict[str, Any]:
    changed = copy.deepcopy(summary)
    changed["workstreams"][0]["tasks"].append(hub_get(hub, "/tasks/plat-t-1"))
    return changed


# A plan that writes to the platform task, as a model shown platform's data would propose.
PLAN = {
    "progress_events": [
        {"workstream_id": "plat-ws-1", "task_id": "plat-t-1", "event_type": "observation",
         "rests_on": ["plat-t-1"],
         "summary": "Runners look provisioned."}
    ],
    "tasks_to_update": [{"task_id": "plat-t-1", "status": "in_progress", "reason": "seen"}],
    "tasks_to_flag": [{"task_id": "plat-t-1", "note": "Check the runners."}],
}  # fmt: skip

CASES: list[tuple[Rewrite, str]] = [
    (platform_data, "it names domain 'platform'"),
    (platform_relabelled, "workstream 'plat-ws-1' is in domain 'platform'"),
    (duplicate_task, "task id 'web-t-1' appears more than once"),
    (foreign_task, "task 'plat-t-1' is listed under workstream 'web-ws-1'"),
]


def _state(hub: ReferenceHub) -> list[Any]:
    views = [hub_get(hub, f"/domains/{d}/summary?events=500") for d in ("website", "platform")]
    return [{k: v for k, v in view.items() if k != "generated_at"} for view in views]


@pytest.mark.parametrize(("rewrite", "problem"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_summary_not_of_the_domain_exits_3_before_the_model_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    proxied: Callable[[Rewrite], Proxy],
    rewrite: Rewrite,
    problem: str,
) -> None:
    proxy = proxied(rewrite)
    calls = tmp_path / "calls.txt"
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(PLAN), encoding="utf-8")
    script = tmp_path / "model.py"
    script.write_text(
        f"import sys\nopen({str(calls)!r}, 'a').write('called\\n')\n"
        f"sys.stdout.write(open({str(answer)!r}).read())\n"
    )
    before = _state(small_hub)
    argv = ["run", "--domain", "website", "--hub", proxy.url, "--llm",
            f"cmd:{sys.executable} {script}", "--memory", str(tmp_path / "memory"),
            "--canon", str(CANON), "--json", "--force"]  # fmt: skip
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 3, result.stdout + result.stderr
    assert problem in result.stdout + result.stderr
    assert not calls.exists(), "the model was called"
    assert set(proxy.methods) == {"GET"}
    assert _state(small_hub) == before
    assert result.json()["status"] == "failed"


def test_the_same_plan_without_the_proxy_never_touches_platform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    # The control: the plan above is denied on an honest observation, so only the check stops it.
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(PLAN), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}",
            "--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--json"]  # fmt: skip
    before = _state(small_hub)[1]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 0, result.stderr
    assert result.json()["executed"] == []
    assert _state(small_hub)[1] == before


# --- the pure check --------------------------------------------------------------------------

TS = datetime(2026, 11, 29, 8, 0, tzinfo=UTC).isoformat()


def _summary(**changes: Any) -> dict[str, Any]:
    task = {"id": "t1", "workstream_id": "w1", "title": "T", "status": "todo",
            "created_at": TS, "updated_at": TS, "version": 1}  # fmt: skip
    base: dict[str, Any] = {
        "domain": "website",
        "generated_at": TS,
        "workstreams": [{"id": "w1", "domain": "website", "title": "W", "status": "active",
                         "created_at": TS, "updated_at": TS, "tasks": [task]}],
        "open_decisions": [{"id": "d1", "domain": "website", "workstream_id": "w1",
                            "title": "D", "status": "open", "created_at": TS}],
        "open_flags": [{"id": "f1", "workstream_id": "w1", "task_id": "t1", "note": "n",
                        "status": "open", "raised_by": "x", "created_at": TS}],
        "recent_events": [{"id": "e1", "workstream_id": "w1", "task_id": "t1",
                           "event_type": "note", "summary": "s", "source": "x",
                           "created_at": TS}],
    }  # fmt: skip
    return {**base, **changes}


def _with(path: str, value: Any) -> DomainSummary:
    data = _summary()
    *parents, last = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[int(last) if last.isdigit() else last] = value
    return DomainSummary.model_validate(data)


def test_an_honest_summary_passes() -> None:
    check_domain_summary(DomainSummary.model_validate(_summary()), "website")


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        ("domain", "platform", "it names domain 'platform'"),
        ("workstreams.0.domain", "platform", "workstream 'w1' is in domain 'platform'"),
        ("workstreams.0.tasks.0.workstream_id", "w9", "belongs to workstream 'w9'"),
        ("open_decisions.0.domain", "platform", "decision 'd1' is in domain 'platform'"),
        ("open_decisions.0.workstream_id", "w9", "decision 'd1' is on workstream 'w9'"),
        ("open_flags.0.workstream_id", "w9", "flag 'f1' is on workstream 'w9'"),
        ("open_flags.0.task_id", "t9", "flag 'f1' names task 't9', which is not in 'website'"),
        ("recent_events.0.workstream_id", "w9", "event 'e1' is on workstream 'w9'"),
        ("recent_events.0.task_id", "t9", "event 'e1' names task 't9'"),
    ],
)
def test_each_foreign_item_is_named(path: str, value: Any, problem: str) -> None:
    with pytest.raises(ObservationRejected) as caught:
        check_domain_summary(_with(path, value), "website")
    assert problem in caught.value.message and isinstance(caught.value, HubError)
    assert caught.value.exit_code == 3 and caught.value.code == "observation_rejected"


@pytest.mark.parametrize("kind", ["open_decisions", "open_flags", "recent_events"])
def test_a_repeated_id_is_refused(kind: str) -> None:
    data = _summary()
    data[kind] = data[kind] * 2
    with pytest.raises(ObservationRejected, match="appears more than once"):
        check_domain_summary(DomainSummary.model_validate(data), "website")


def test_a_task_of_another_workstream_in_the_domain_is_refused_for_a_flag() -> None:
    data = _summary()
    second = {**data["workstreams"][0], "id": "w2", "tasks": []}
    data["workstreams"].append(second)
    data["open_flags"][0]["workstream_id"] = "w2"
    with pytest.raises(ObservationRejected, match="names task 't1' of workstream 'w1'"):
        check_domain_summary(DomainSummary.model_validate(data), "website")


def test_approve_refuses_a_summary_of_another_domain_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    proxied: Callable[[Rewrite], Proxy],
) -> None:
    answer = tmp_path / "answer.md"
    proposal = {"operation": "create_task", "rationale": "The launch needs a sitemap.",
                "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"}}  # fmt: skip
    answer.write_text(plan_response({"proposals": [proposal]}), encoding="utf-8")
    memory = str(tmp_path / "memory")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}",
            "--memory", memory, "--canon", str(CANON), "--json"]  # fmt: skip
    (queued,) = run_cli(argv, tmp_path, monkeypatch).json()["queued"]
    proxy = proxied(platform_relabelled)
    # The hub itself answers wrongly: the item is bound to the URL the approval uses.
    stored = Path(memory) / "approvals" / f"{queued['approval_id']}.json"
    item = json.loads(stored.read_text(encoding="utf-8"))
    stored.write_text(json.dumps({**item, "hub": proxy.url.rstrip("/")}), encoding="utf-8")
    before = _state(small_hub)
    argv = ["approvals", "--memory", memory, "approve", queued["approval_id"], "--by", "ana",
            "--hub", proxy.url]  # fmt: skip
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 3, result.stdout + result.stderr
    assert "workstream 'plat-ws-1' is in domain 'platform'" in result.stderr
    assert set(proxy.methods) == {"GET"}
    assert _state(small_hub) == before
    listed = run_cli(["approvals", "--memory", memory, "list", "--json"], tmp_path, monkeypatch)
    assert [i["status"] for i in listed.json()] == ["pending"]
