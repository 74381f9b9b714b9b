"""Finding 8 of issue #19: hubs are told apart by the hub (contract v1.2), not by URL.

- The same hub behind another URL or port is the same hub: an item queued through one is
  approved through the other, and a killed run's write is settled through the other.
- A v1.1 hub (no hub_id) falls back to its URL, and the run says so; items bound by URL keep
  working against that URL.
- Every command a refusal suggests runs as printed (`sh -c`, the installed `custodian`): the
  embedded hub's included, which used to print `--hub embedded:/path`.
- The review page's preview and its approve agree, item by item.
Real hubs on loopback, the CLI in-process or as a real subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.clock import utc_now
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person.carry_out import decide
from custodian_runtime.review.pending import pending_views
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, CliResult, hub_get, plan_response, run_cli, small_dataset
from support.spine import (
    THREE_WRITES,
    WriteHold,
    clean_env,
    finish,
    journal,
    kill_when_held,
    run_argv,
    start_run,
    write_plan,
)

BIN = Path(sys.executable).parent
CREATES = [
    {"operation": "create_task", "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"}},
    {"operation": "record_decision", "params": {"title": "Which CMS?"}},
]
WRITE_CANON = {"operation": "write_canon", "params": {"path": "domains/new.md", "content": "x\n"}}


def _queue(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: str, canon: Path, proposals: list[Any]
) -> dict[str, str]:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": proposals}), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", hub, "--llm", f"file:{answer}", "--force"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json"]
    result = run_cli(argv, tmp_path, mp, CUSTODIAN_EMBEDDED_DIR=str(tmp_path / "hub"))
    assert result.code == 0, result.stderr
    return {q["operation"]: q["approval_id"] for q in result.json()["queued"]}


def _approve(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: str, approval_id: str, **env: str
) -> CliResult:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", approval_id]
    argv += ["--by", "ana", "--hub", hub]
    return run_cli(argv, tmp_path, mp, **{"CUSTODIAN_CANON_DIR": str(CANON), **env})


def _item(tmp_path: Path, approval_id: str) -> dict[str, Any]:
    path = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _suggested(said: str) -> str:
    """The command a refusal suggests: everything after its last ': ' up to the line's end."""
    found = re.search(r"Approve it (?:on that hub|with the canon it was proposed for): (.+)$", said)
    assert found is not None, said
    return found.group(1).strip()


def _run_as_printed(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command through a POSIX shell, as a person would paste it: `custodian` on PATH."""
    env = clean_env(PATH=f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def shared_db(tmp_path: Path) -> Path:
    db = tmp_path / "shared.sqlite3"
    load_seed(db, small_dataset())
    return db


@pytest.fixture
def two_doors(shared_db: Path) -> Iterator[tuple[ReferenceHub, ReferenceHub]]:
    """One hub (one store) served on two ports at once: two URLs, one hub_id."""
    with ReferenceHub(shared_db) as first, ReferenceHub(shared_db) as second:
        yield first, second


def test_an_item_queued_through_one_port_is_approved_through_another(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    two_doors: tuple[ReferenceHub, ReferenceHub],
) -> None:
    first, second = two_doors
    queued = _queue(tmp_path, monkeypatch, first.url, CANON, CREATES)
    item = _item(tmp_path, queued["create_task"])
    hub_id = hub_get(first, "/health")["hub_id"]
    assert item["hub"] == f"hub_id:{hub_id}" and item["hub_at"] == first.url
    approved = _approve(tmp_path, monkeypatch, second.url, queued["create_task"])
    assert approved.code == 0, approved.stdout + approved.stderr
    assert _item(tmp_path, queued["create_task"])["status"] == "executed"
    titles = [t["title"] for ws in hub_get(first, "/domains/website/summary")["workstreams"]
              for t in ws["tasks"]]  # fmt: skip
    assert "Add a sitemap" in titles
    (authorized,) = [r for r in journal(tmp_path / "memory") if r.kind == "authorized"]
    assert authorized.data["hub"] == f"hub_id:{hub_id}"
    assert authorized.data["hub_at"] == second.url


def test_the_same_url_on_another_hub_is_refused_and_its_command_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, shared_db: Path
) -> None:
    queued = _queue(tmp_path, monkeypatch, small_hub.url, CANON, CREATES)
    with ReferenceHub(shared_db) as other:  # another store: another hub_id
        refused = _approve(tmp_path, monkeypatch, other.url, queued["record_decision"])
        before = hub_get(other, "/decisions?domain=website")
        assert hub_get(other, "/decisions?domain=website") == before
    said = refused.stdout + refused.stderr
    assert refused.code == 2 and "proposed on hub hub_id:" in said, said
    command = _suggested(said)
    assert f"--hub {small_hub.url}" in command
    ran = _run_as_printed(command, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _item(tmp_path, queued["record_decision"])["status"] == "executed"


def test_an_embedded_item_refused_elsewhere_names_a_command_that_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = _queue(tmp_path, monkeypatch, "embedded", CANON, CREATES)
    item = _item(tmp_path, queued["create_task"])
    db = (tmp_path / "hub" / "hub.sqlite3").resolve()
    assert item["hub"].startswith("hub_id:") and item["hub_at"] == f"embedded:{db}"
    other = str(tmp_path / "other hub")  # a space: the command must quote it
    refused = _approve(
        tmp_path, monkeypatch, "embedded", queued["create_task"], CUSTODIAN_EMBEDDED_DIR=other
    )
    said = refused.stdout + refused.stderr
    assert refused.code == 2, said
    assert not Path(other, "hub.sqlite3").exists(), "refused before another hub was made"
    command = _suggested(said)
    assert "embedded:" not in command.split("--hub", 1)[1]
    ran = _run_as_printed(command, Path("/"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _item(tmp_path, queued["create_task"])["status"] == "executed"


def test_a_canon_refusal_names_a_command_that_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    queued = _queue(tmp_path, monkeypatch, small_hub.url, canon, [WRITE_CANON])
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve"]
    argv += [queued["write_canon"], "--by", "ana", "--note", "it's fine"]
    refused = run_cli(argv, tmp_path, monkeypatch, CUSTODIAN_CANON_DIR=str(tmp_path))
    said = refused.stdout + refused.stderr
    assert refused.code == 2, said
    ran = _run_as_printed(_suggested(said), tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (canon / "domains" / "new.md").read_text() == "x\n"
    assert _item(tmp_path, queued["write_canon"])["decision_note"] == "it's fine"


class _V11Hub(httpx.BaseTransport):
    """A v1.1 hub in front of a real one: no hub_id, no revisions."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        body = response.read()
        if request.url.path in ("/health", "/state/summary"):
            data = {k: v for k, v in json.loads(body).items() if k != "hub_id"}
            body = json.dumps(data).encode()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, content=body)


def test_a_v11_hub_falls_back_to_its_url_says_so_and_keeps_working_by_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": CREATES}), encoding="utf-8")
    flags = {"domain": "website", "hub": small_hub.url, "llm": f"file:{answer}", "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    settings = load_settings(flags, {"PATH": "/usr/bin:/bin"}, tmp_path)
    stderr = tmp_path / "stderr"
    with stderr.open("w") as err:
        result = run(settings, transport=_V11Hub(), stderr=err)
    logged = stderr.read_text()
    assert "sends no hub_id (contract v1.1)" in logged and logged.count("no hub_id") == 1
    queued = {q["operation"]: q["approval_id"] for q in result.summary()["queued"]}
    item = _item(tmp_path, queued["create_task"])
    assert item["hub"] == small_hub.url  # bound by URL
    # The hub now speaks v1.2 at the same URL: the item bound by URL still works there.
    approved = _approve(tmp_path, monkeypatch, small_hub.url, queued["create_task"])
    assert approved.code == 0, approved.stdout + approved.stderr


class _Counting(httpx.BaseTransport):
    """The real hub, counting the requests per path."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return self._inner.handle_request(request)


@pytest.mark.parametrize(("plan", "health_reads"), [({}, 0), (THREE_WRITES, 1)])
def test_a_run_asks_the_hubs_identity_once_and_only_when_it_binds_something(
    tmp_path: Path, small_hub: ReferenceHub, plan: dict[str, Any], health_reads: int
) -> None:
    llm = write_plan(tmp_path / "answer.md", plan)
    flags = {"domain": "website", "hub": small_hub.url, "llm": llm, "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    settings = load_settings(flags, {"PATH": "/usr/bin:/bin"}, tmp_path)
    counting = _Counting()
    with (tmp_path / "stderr").open("w") as err:
        result = run(settings, transport=counting, stderr=err)
    assert result.summary()["exit_code"] == 0
    assert counting.paths.count("/health") == health_reads


def test_an_item_bound_by_url_before_v12_keeps_working_against_that_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = _queue(tmp_path, monkeypatch, small_hub.url, CANON, CREATES)
    path = tmp_path / "memory" / "approvals" / f"{queued['create_task']}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["hub"] = small_hub.url  # as queued before items were bound to hub ids
    del data["hub_at"]
    path.write_text(json.dumps(data), encoding="utf-8")
    approved = _approve(tmp_path, monkeypatch, small_hub.url, queued["create_task"])
    assert approved.code == 0, approved.stdout + approved.stderr


def test_a_killed_runs_write_is_settled_through_another_door_of_the_same_hub(
    tmp_path: Path, shared_db: Path
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with ReferenceHub(shared_db, on_write=hold) as hub:
        kill_when_held(
            tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the held write"
        )
        hold.release(abort=True)
        first_url = hub.url
    with ReferenceHub(shared_db) as again:  # the same store on a new port: the same hub
        assert again.url != first_url
        code, _, err = finish(start_run(tmp_path, run_argv(again.url, llm, memory, "--force")))
    assert code == 0, err
    kinds = [r.kind for r in journal(memory)]
    assert "reconciled" in kinds


def test_the_review_preview_and_approve_agree_item_by_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, shared_db: Path
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    queued = _queue(tmp_path, monkeypatch, small_hub.url, canon, [*CREATES, WRITE_CANON])
    with ReferenceHub(shared_db) as other:
        for hub_url, canon_dir in ((other.url, tmp_path), (small_hub.url, canon)):
            flags = {"hub": hub_url, "memory": str(tmp_path / "memory"), "canon": str(canon_dir)}
            settings = load_settings(
                flags,
                {"PATH": "/usr/bin:/bin"},
                tmp_path,
                domain_required=False,
                hub_required=False,
            )
            store = ApprovalStore(settings.memory_dir, settings.seal_key)
            views = pending_views(settings, store, utc_now())
            assert {v.item.id for v in views} == set(queued.values())
            for view in views:
                assert view.verdict is not None
                done = decide(settings, view.item.id, "approve", "ana", None)
                assert (view.verdict == "would run") == (done.exit_code == 0), (
                    view.verdict,
                    done.message,
                )
    statuses = {_item(tmp_path, approval_id)["status"] for approval_id in queued.values()}
    assert statuses == {"executed"}
