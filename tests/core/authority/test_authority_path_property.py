"""Property: whatever the journal, the approval queue and the hub hold, every write that leaves
is one `authorize()` allows on the observation now, or one a person approved as it stands.

Each example seeds a real reference hub on loopback with generated task statuses and flags,
appends generated records to the domain's journal (rulings, authorized records by policy or by a
person, dispatches, approval decisions; fingerprints right or wrong; ids inside and outside the
domain; times inside and past the hub's key window), queues one approval item and edits it, then
runs the real reconcile and the real `approvals approve`. Every write the hub commits must match
a dispatched authorized record, and each such record must be allowed.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.approvals.items import new_item
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.authority.precondition import precondition
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.plan.extract import Plan, fingerprint
from custodian_runtime.core.ruling.path import as_item
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.run_journal import DiskJournal
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.person import decide_approve
from custodian_runtime.process.phase_log import PhaseLog
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.run._reconcile import Reconciling, reconcile
from custodian_runtime.settings import load_settings
from custodian_runtime.statehub.client import StateHubClient
from support.runs import small_dataset

T0 = datetime.now(UTC).replace(microsecond=0)
WEB_TASKS = ("web-t-1", "web-t-2", "web-t-3")
TASK_IDS = st.sampled_from([*WEB_TASKS, *WEB_TASKS, "plat-t-1", "web-t-99"])
RUNS = st.sampled_from(["r1", "r2", "approval-apr-1-aaaaaa"])

WRITES = st.one_of(
    st.fixed_dictionaries(
        {"task_id": TASK_IDS, "status": st.sampled_from(["done", "in_progress", "cancelled"])}
    ).map(lambda p: ("update_task_status", p)),
    st.fixed_dictionaries(
        {"task_id": TASK_IDS, "status": st.sampled_from(["blocked", "cancelled", "todo"])}
    ).map(lambda p: ("set_task_status", p)),
    st.fixed_dictionaries({"task_id": TASK_IDS, "note": st.just("look")}).map(
        lambda p: ("flag_for_human", p)
    ),
    st.fixed_dictionaries(
        {
            "workstream_id": st.sampled_from(["web-ws-1", "plat-ws-1"]),
            "event_type": st.just("note"),
            "rests_on": st.lists(TASK_IDS, min_size=1, max_size=2),
            "summary": st.just("progress"),
        }
    ).map(lambda p: ("add_progress_event", p)),
)


@st.composite
def chains(draw: st.DrawFn) -> list[tuple[str, str, dict[str, Any]]]:
    """The records one forged or damaged item leaves: (run id, kind, data), each maybe missing.

    Mostly near-valid chains (a ruling, then authorized, then dispatched), with one part
    dropped or changed: no ruling, a deny ruling, other params, a wrong fingerprint, a person
    with or without an approval on record.
    """
    run, index = draw(RUNS), draw(st.integers(0, 1))
    operation, params = draw(WRITES)
    fp = fingerprint(operation, params)
    by = draw(st.sampled_from(["policy", "policy", "person:mallory"]))
    out: list[tuple[str, str, dict[str, Any]]] = []
    if by != "policy" and draw(st.booleans()):
        decision = draw(st.sampled_from(["approved", "stale"]))
        out.append((run, "approval_decided", {"approval_id": "apr-1", "decision": decision}))
    if draw(st.integers(0, 3)):  # a ruling, three times in four
        ruled_op, ruled = (operation, params) if draw(st.integers(0, 2)) else draw(WRITES)
        outcome = draw(st.sampled_from(["execute", "execute", "deny"]))
        data = {"index": index, "operation": ruled_op, "target": None, "params": ruled}
        data |= {"fingerprint": fingerprint(ruled_op, ruled), "outcome": outcome, "reason": "r"}
        out.append((run, "ruling", data | {"precondition": draw(PRECONDITIONS)}))
    if not draw(st.integers(0, 4)):
        fp = "f" * 64
    data = {"index": index, "operation": operation, "params": params, "fingerprint": fp}
    out.append(
        (run, "authorized", data | {"idempotency_key": f"custodian-{run}-{index}", "by": by})
    )
    if draw(st.booleans()):
        out.append(
            (run, "dispatched", {"index": index, "idempotency_key": f"custodian-{run}-{index}"})
        )
    return out


PRECONDITIONS = st.sampled_from(
    [{}, {"task": {"id": "web-t-1", "status": "todo"}}, {"task": {"id": "plat-t-1"}}]
)


@st.composite
def hub_states(draw: st.DrawFn) -> dict[str, Any]:
    """The small dataset with generated statuses for the website tasks and open flags."""
    data = small_dataset()
    statuses = ["todo", "in_progress", "blocked", "done"]
    for task in data["tasks"]:
        if task["id"] in WEB_TASKS:
            task["status"] = draw(st.sampled_from(statuses))
    if draw(st.booleans()):
        flag = dict(data["flags"][0], id="fl-2", workstream_id="web-ws-1")
        data["flags"].append(flag | {"task_id": draw(st.sampled_from(WEB_TASKS))})
    return data


EDITS = st.fixed_dictionaries(
    {
        "params": st.none()
        | WRITES.filter(lambda w: w[0] == "set_task_status").map(lambda w: w[1]),
        "refingerprint": st.booleans(),
        "precondition": st.sampled_from(["keep", "empty", "moved"]),
    }
)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    state=hub_states(),
    appends=st.lists(chains(), max_size=3).map(lambda cs: [r for c in cs for r in c]),
    hours=st.sampled_from([1, 30]),
    edit=EDITS,
)
def test_every_write_that_leaves_is_allowed_now(
    state: dict[str, Any], appends: list[Any], hours: int, edit: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        load_seed(root / "hub.sqlite3", state)
        commits: list[tuple[str, str]] = []

        def on_write(phase: str, method: str, path: str) -> None:
            if phase == "after_commit":
                commits.append((method, path))

        with ReferenceHub(root / "hub.sqlite3", on_write=on_write) as hub:
            _check_one_example(root, hub, appends, hours, edit, commits)


def _check_one_example(
    root: Path,
    hub: ReferenceHub,
    appends: list[Any],
    hours: int,
    edit: dict[str, Any],
    commits: list[tuple[str, str]],
) -> None:
    memory = root / "memory"
    store = JournalStore(memory, fsync=lambda fd: None)
    for run_id, kind, data in appends:
        store.writer("website", run_id, lambda: T0).append(kind, data)
    with StateHubClient(hub.url) as client:
        observed = client.domain_summary("website")
    aid = _queue_and_edit(memory, observed, edit)
    before = len(store.scan("website").records)

    _reconcile(store, client_url=hub.url, observed=observed, now=T0 + timedelta(hours=hours))
    cfg = load_settings(
        {"domain": "website", "hub": hub.url, "llm": "offline", "memory": str(memory)}, {}, root
    )
    with contextlib.suppress(CustodianError):
        decide_approve(cfg, ApprovalStore(memory), aid, "ana", None, datetime.now(UTC))

    new = store.scan("website").records[before:]
    sent = _dispatched_authorizations(store.scan("website").records, new)
    assert len(commits) <= len(sent), (commits, sent)
    history = store.scan("website").records[:before]
    for record in sent:
        _assert_allowed(record, observed, history, ApprovalStore(memory))


def _queue_and_edit(memory: Path, observed: DomainSummary, edit: dict[str, Any]) -> str:
    params = {"task_id": "web-t-1", "status": "cancelled"}
    item = as_item("set_task_status", params, fingerprint("set_task_status", params))
    queued = new_item(
        approval_id="apr-1",
        domain="website",
        operation="set_task_status",
        params=params,
        rationale="r",
        run_id="r0",
        fingerprint=item.fingerprint,
        precondition=precondition(item, observed),
        now=datetime.now(UTC),
        ttl_days=14,
    )
    changes: dict[str, Any] = {}
    if edit["params"] is not None:
        changes["params"] = edit["params"]
        if edit["refingerprint"]:
            changes["fingerprint"] = fingerprint("set_task_status", edit["params"])
    if edit["precondition"] == "empty":
        changes["precondition"] = {}
    elif edit["precondition"] == "moved":
        moved = dict(queued.precondition.get("task") or {}, status="blocked")
        changes["precondition"] = {"task": moved}
    ApprovalStore(memory).save(queued.model_copy(update=changes))
    return "apr-1"


def _reconcile(
    store: JournalStore, *, client_url: str, observed: DomainSummary, now: datetime
) -> None:
    history = list(store.read("website").records)
    writer = store.writer("website", "r-prop", lambda: now)
    log = PhaseLog(io.StringIO(), fmt="text", run_id="r-prop", domain="website",
                   clock=lambda: now, monotonic=lambda: 0.0)  # fmt: skip
    with StateHubClient(client_url) as client:
        ctx = Reconciling("r-prop", observed, DiskJournal(writer), client, now)
        with contextlib.suppress(CustodianError):
            reconcile(history, ctx, log, StopFlag())


def _dispatched_authorizations(
    records: tuple[core_journal.Record, ...], new: tuple[core_journal.Record, ...]
) -> list[core_journal.Record]:
    """The authorized record behind each dispatch the runs under test made."""
    traces = core_journal.trace_items(records)
    found = []
    for record in new:
        if record.kind != "dispatched":
            continue
        origin = record.data.get("reconciles") or record.run_id
        found.append(traces[(origin, record.data.get("index"))].authorized)
    return found


def _assert_allowed(
    auth: core_journal.Record,
    observed: DomainSummary,
    history: tuple[core_journal.Record, ...],
    queue: ApprovalStore,
) -> None:
    operation, params = auth.data["operation"], auth.data["params"]
    item = as_item(operation, params, fingerprint(operation, params))
    [ruling] = authorize(Plan(prose="", observations=(), items=(item,), raw_json=""), observed)
    if str(auth.data["by"]).startswith("person:"):
        # Only the real queued item, unedited, approved by the person, against the state now.
        approved = queue.get("apr-1")
        assert auth.run_id.startswith("approval-apr-1-") and approved.status == "executed"
        assert approved.fingerprint == fingerprint(approved.operation, approved.params)
        assert (operation, params) == (approved.operation, approved.params)
        assert ruling.outcome == "queue", ruling.reason
        assert approved.precondition and precondition(item, observed) == approved.precondition
        return
    assert ruling.outcome == "execute", ruling.reason
    if str(auth.data["index"]).startswith("reconcile-"):
        return  # the run's own flag for a person, ruled by the same authority just now
    # A re-sent write: its run ruled it `execute` with the same fingerprint and params.
    key = (auth.run_id, auth.data["index"])
    rulings = [r for r in history if r.kind == "ruling" and (r.run_id, r.data.get("index")) == key]
    assert rulings and rulings[0].data["outcome"] == "execute"
    assert rulings[0].data["fingerprint"] == auth.data["fingerprint"] == item.fingerprint
    assert rulings[0].data["params"] == params
