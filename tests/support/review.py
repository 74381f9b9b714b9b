"""Shared parts of the review page tests: a run that queues two items, the page, a browser."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.cli.hub import with_embedded_hub
from custodian_runtime.review.server import ReviewServer
from custodian_runtime.settings import Settings, load_settings
from support.runs import CANON, REPO, hub_get, plan_response, run_cli
from support.spine import journal

CREATE_TASK = {
    "operation": "create_task",
    "rationale": "The launch needs a sitemap.",
    "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"},
}
RESOLVE = {
    "operation": "resolve_decision",
    "rationale": "Vendor A won the trial.",
    "params": {"decision_id": "dec-1", "resolution": "A"},
}
PROSE = (
    "Looked at the **website** domain: the sitemap is missing.\n\n"
    "See [the vendor page](https://vendor.invalid/pick) and "
    "![a chart](https://tracker.invalid/pixel.png) <script>alert(1)</script>\n"
)
REJECT_REASON = "We pick the vendor after the security review."
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1100,1000",
)
INSTALL = "apt-get update && apt-get install -y chromium chromium-driver"


@dataclass(frozen=True)
class Queued:
    """A memory directory after one run that queued create_task and resolve_decision."""

    memory: Path
    run_id: str
    create_id: str
    resolve_id: str


def queue_two(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> Queued:
    """One real run (a `file:` model answer) that queues two items for a person."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    answer = tmp_path / "answer.md"
    answer.write_text(
        plan_response({"proposals": [CREATE_TASK, RESOLVE]}, prose=PROSE), encoding="utf-8"
    )
    memory = tmp_path / "memory"
    # A relative answer path: the model's name is shown on the page (and in the screenshots).
    argv = ["run", "--domain", "website", "--hub", hub.url, "--llm", "file:answer.md"]
    result = run_cli(
        [*argv, "--memory", str(memory), "--canon", str(CANON), "--json"], tmp_path, mp
    )
    assert result.code == 0, result.stderr
    queued = {q["operation"]: q["approval_id"] for q in result.json()["queued"]}
    return Queued(
        memory, result.json()["run_id"], queued["create_task"], queued["resolve_decision"]
    )


def review_settings(memory: Path, hub_url: str, cwd: Path, canon: Path = CANON) -> Settings:
    """The settings `custodian review --memory M --hub URL` resolves to."""
    flags = {"memory": str(memory), "hub": hub_url, "canon": str(canon)}
    env = {k: v for k, v in os.environ.items() if k == "CUSTODIAN_TYPED_NAMES"}  # conftest's
    settings = load_settings(flags, env, cwd, domain_required=False, hub_required=False)
    return with_embedded_hub(settings)


@contextmanager
def review_page(settings: Settings) -> Iterator[ReviewServer]:
    """`custodian review` in a thread on a free loopback port."""
    with ReviewServer(settings, "127.0.0.1", 0) as server:
        yield server


def _strip_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_times(v) for k, v in value.items() if not k.endswith("_at")}
    if isinstance(value, list):
        return [_strip_times(v) for v in value]
    return value


def hub_state(hub: ReferenceHub) -> Any:
    """What the hub holds for `website`, without timestamps (two seeds differ only in those)."""
    summary = hub_get(hub, "/domains/website/summary")
    decisions = hub_get(hub, "/decisions?domain=website")
    return _strip_times({"summary": summary, "decisions": decisions})


def memory_state(queued: Queued) -> Any:
    """Both items and every approval run's records, without times, ids of runs or seals."""
    items = {}
    for name, approval_id in (("create", queued.create_id), ("resolve", queued.resolve_id)):
        path = queued.memory / "approvals" / f"{approval_id}.json"
        item = json.loads(path.read_text(encoding="utf-8"))
        items[name] = {k: item[k] for k in ("status", "decided_by", "reject_reason", "result")}
    runs: dict[str, list[Any]] = {}
    # Approval ids end with a random part, so each side's ids are named by their item.
    names = {queued.create_id: "create", queued.resolve_id: "resolve"}
    for record in journal(queued.memory):
        if record.run_id.startswith("approval-"):
            approval_id = record.run_id.removeprefix("approval-").rsplit("-", 1)[0]
            # A hub answer holds its own timestamps, and each side is bound to its own hub and
            # memory's canon; each authorization draws its own nonce (in its key) and each
            # decision its own word id; everything else must match exactly.
            skip = ("response_sha256", "hub", "canon", "nonce", "idempotency_key", "word")
            data = {k: v for k, v in record.data.items() if k not in skip}
            text = json.dumps(data)
            for full, name in names.items():
                text = text.replace(full, name)
            runs.setdefault(names[approval_id], []).append(
                (record.kind, _strip_times(json.loads(text)))
            )
    return {"items": items, "runs": dict(sorted(runs.items()))}


def chrome(profile: Path) -> Any:
    """Debian's headless Chromium through chromedriver; fails (never skips) when missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail(f"the browser test needs Debian's chromium and chromedriver: {INSTALL}")
    options = Options()
    options.binary_location = binary
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: REVIEW_SCREENSHOTS (e.g. `docs`, under the repo) or the test's tmp."""
    given = os.environ.get("REVIEW_SCREENSHOTS")
    return REPO / given if given else tmp_path


TEN = [
    {"operation": "create_task", "rationale": "The launch needs a sitemap.",
     "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"}},
    {"operation": "create_task", "rationale": "Old links must keep working.",
     "params": {"workstream_id": "web-ws-2", "title": "Redirect old blog URLs"}},
    {"operation": "create_task", "rationale": "Images need alt text.",
     "params": {"workstream_id": "web-ws-1", "title": "Check alt texts"}},
    RESOLVE,
    {"operation": "set_task_status", "rationale": "The announcement moved to the blog team.",
     "params": {"task_id": "web-t-3", "status": "cancelled"}},
    {"operation": "resolve_flag", "rationale": "Ben added the credentials.",
     "params": {"flag_id": "fl-1"}},
    {"operation": "create_workstream", "rationale": "An audit is due.",
     "params": {"domain": "website", "title": "Accessibility audit"}},
    {"operation": "record_decision", "rationale": "The CMS choice blocks the migration.",
     "params": {"title": "Which CMS?", "options": ["Ghost", "Hugo"], "workstream_id": "web-ws-2"}},
    {"operation": "set_task_status", "rationale": "It waits on the CMS choice.",
     "params": {"task_id": "web-t-5", "status": "blocked"}},
    {"operation": "create_task", "rationale": "Nobody reads the forum.",
     "params": {"workstream_id": "web-ws-2", "title": "Archive the old forum"}},
]  # fmt: skip


def queue_plan(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, proposals: list[Any],
    canon: Path = CANON, *, force: bool = False,
) -> tuple[Path, dict[str, str]]:  # fmt: skip
    """One real run that queues `proposals` (`force`: though the domain is unchanged since the
    last); memory/ and approval id -> its stable name."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "answer.md").write_text(
        plan_response({"proposals": proposals}, prose=PROSE), encoding="utf-8"
    )
    memory = tmp_path / "memory"
    argv = ["run", "--domain", "website", "--hub", hub.url, "--llm", "file:answer.md"]
    argv += ["--force"] if force else []
    result = run_cli(
        [*argv, "--memory", str(memory), "--canon", str(canon), "--json"], tmp_path, mp
    )
    assert result.code == 0, result.stderr
    return memory, item_names(memory)


def item_names(memory: Path) -> dict[str, str]:
    """Approval id -> a name both twins share: the operation and its params."""
    names = {}
    for path in sorted((memory / "approvals").glob("*.json")):
        item = json.loads(path.read_text(encoding="utf-8"))
        names[item["id"]] = f"{item['operation']} {json.dumps(item['params'], sort_keys=True)}"
    return names


def memory_of(memory: Path, names: dict[str, str]) -> Any:
    """Every item's decision and every approval run's records, by the items' stable names."""
    items = {}
    for approval_id, name in names.items():
        item = json.loads((memory / "approvals" / f"{approval_id}.json").read_text("utf-8"))
        items[name] = {k: item[k] for k in ("status", "decided_by", "reject_reason", "result")}
    runs: dict[str, list[Any]] = {}
    skip = ("response_sha256", "hub", "canon", "nonce", "idempotency_key", "word")
    for record in journal(memory):
        if record.run_id.startswith("approval-"):
            approval_id = record.run_id.removeprefix("approval-").rsplit("-", 1)[0]
            text = json.dumps({k: v for k, v in record.data.items() if k not in skip})
            for full in names:
                text = text.replace(full, "ID")
            runs.setdefault(names[approval_id], []).append(
                (record.kind, _strip_times(json.loads(text)))
            )
    return {"items": items, "runs": dict(sorted(runs.items()))}


class Browser:
    """A session on the page: its cookies, and the CSRF token of the last page read."""

    def __init__(self, server: ReviewServer) -> None:
        self.base = f"http://{server.address}"
        self.client = httpx.Client(base_url=self.base, timeout=30)
        first = self.client.get(server.url.removeprefix(self.base))
        assert first.status_code == 303
        self.csrf = ""

    def get(self, path: str) -> httpx.Response:
        page = self.client.get(path)
        found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
        if found:
            self.csrf = found.group(1)
        return page

    def post(self, path: str, **form: str | list[str]) -> httpx.Response:
        return self.client.post(path, data={**form, "csrf": self.csrf})

    def ask(self, approval_id: str, by: str) -> str:
        """Press approve; the confirmation's nonce."""
        asked = self.post(f"/approvals/{approval_id}", decision="approve", by=by)
        assert asked.status_code == 303, asked.text
        page = self.get(asked.headers["location"]).text
        assert f'data-confirm-approval-id="{approval_id}"' in page
        found = re.search(r'name="nonce" value="([\w-]+)"', page)
        assert found is not None
        return found.group(1)


def create(title: str) -> dict[str, Any]:
    """A create_task proposal in web-ws-1."""
    return {
        "operation": "create_task",
        "rationale": "The relaunch needs it.",
        "params": {"workstream_id": "web-ws-1", "title": title},
    }


def agreed(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> Path:
    """A memory where a person approved ten create_task proposals: the report suggests a grant."""
    memory, names = queue_plan(tmp_path, mp, hub, [create(f"Page {n}") for n in range(10)])
    for approval_id in names:
        argv = ["approvals", "--memory", str(memory), "approve", approval_id, "--by", "ana"]
        done = run_cli([*argv, "--hub", hub.url], tmp_path, mp)
        assert done.code == 0, done.stderr
    return memory
