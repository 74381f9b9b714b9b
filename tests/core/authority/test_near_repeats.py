"""A create that nearly repeats an open one in its scope is denied, naming it, before anyone is
asked: the pure likeness of two titles, the ruling, and a run on the reference hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations.near import NEAR_REPEAT, nearly_repeats, similarity
from support.authority import plan_of, proposal, website
from support.runs import hub_get, run_cli, run_plan

TASK = "Rotate the TLS certificates on the edge proxies"


@pytest.mark.parametrize(
    "other",
    [
        "Rotate the TLS certificates on the edge proxies again",
        "rotate TLS certificates on edge proxies, once more.",
        "Renew the TLS certificates on the edge proxies",  # one word changed
        "The edge proxies: rotate their TLS certificates",  # another order
        "ROTATE  the tls certificate on the edge proxies!",  # case, spacing, a plural
    ],
)
def test_a_title_in_other_words_nearly_repeats(other: str) -> None:
    assert nearly_repeats(other, TASK) and nearly_repeats(TASK, other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Rotate certs", "Audit certs"),  # one word of two: two tasks
        ("Write the runbook step 3 of edge", "Write the runbook step 4 of edge"),  # a number
        ("Maintenance window of week 1", "Maintenance window of week 2"),
        ("Rotate the TLS certificates", "Audit the WAF rule set"),
        ("Migrate blog posts", "Fix broken image links"),
        (
            "Rotate the TLS certificates on the edge proxies",
            "Rotate the DNS keys of the mail relay",
        ),
    ],
)
def test_genuinely_different_titles_do_not(one: str, other: str) -> None:
    assert not nearly_repeats(one, other)


def test_the_threshold_is_the_share_of_the_longer_title() -> None:
    assert similarity("Delete the cache bucket", "Remove the cache bucket") == pytest.approx(2 / 3)
    assert similarity("Delete the cache bucket", "Remove the cache bucket") >= NEAR_REPEAT
    assert similarity("Rotate certs", "Audit certs") == 0.5 < NEAR_REPEAT
    assert similarity("", "") == 1.0 and similarity("the", "a") == 0.0


TITLES = {"t-todo": "Upgrade the ingress controller", "t-prog": "Audit the WAF rule set",
          "t-block": "Verify the nightly snapshots", "t-done": "Clean the alert rules of the API",
          "t-docs": "Upgrade the ingress controller"}  # fmt: skip


def _titled() -> DomainSummary:
    """The authority tests' website, its tasks named as an ops team names them."""
    seen = website()
    workstreams = tuple(
        ws.model_copy(update={"tasks": tuple(t.model_copy(update={"title": TITLES[t.id]})
                                             for t in ws.tasks)})
        for ws in seen.workstreams
    )  # fmt: skip
    return seen.model_copy(update={"workstreams": workstreams})


def _rule(op: str, seen: DomainSummary | None = None, **params: Any) -> Any:
    plan = plan_of(proposals=[proposal(op, **params)])
    (ruling,) = authorize(plan, seen or website(), Limits())
    return ruling


def test_a_create_repeating_an_open_task_of_its_workstream_is_denied_naming_it() -> None:
    again = _rule("create_task", _titled(), workstream_id="ws-web",
                  title="Update the ingress controller again")  # fmt: skip
    assert again.outcome == "deny"
    assert "nearly repeats task t-todo 'Upgrade the ingress controller'" in again.reason
    assert "open in its workstream" in again.reason and "t-docs" not in again.reason
    # A done task is not repeated by a new one, nor is a task of another workstream.
    done = _rule("create_task", _titled(), workstream_id="ws-web",
                 title="Clean the API's alert rules again")  # fmt: skip
    assert done.outcome == "queue", done.reason
    other = _rule("create_task", _titled(), workstream_id="ws-docs",
                  title="Audit the WAF rule set again")  # fmt: skip
    assert other.outcome == "queue", other.reason
    new = _rule("create_task", _titled(), workstream_id="ws-web", title="Rotate the DNS keys")
    assert new.outcome == "queue", new.reason


def test_a_decision_or_workstream_in_other_words_is_denied_too() -> None:
    decision = _rule("record_decision", title="Pick the host, once more")
    assert decision.outcome == "deny" and "nearly repeats decision" in decision.reason
    ws = _rule("create_workstream", domain="website", title="The workstream ws-docs again")
    assert ws.outcome == "deny" and "nearly repeats workstream ws-docs" in ws.reason


def test_a_run_denies_the_repeat_and_queues_the_new_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    new = {"workstream_id": "web-ws-1", "title": "Add a sitemap"}
    repeat = {"workstream_id": "web-ws-1", "title": "Write the launch announcement again"}
    plan = {"proposals": [{"operation": "create_task", "rationale": "r", "params": p}
                          for p in (new, repeat)]}  # fmt: skip
    run = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json")
    assert run.code == 0, run.stderr
    summary = run.json()
    assert [q["operation"] for q in summary["queued"]] == ["create_task"]
    (denied,) = summary["denied"]
    assert denied["index"] == 1
    assert "nearly repeats task web-t-3 'Write launch announcement'" in denied["reason"]
    listed = run_cli(["approvals", "--memory", str(tmp_path / "memory"), "list", "--json"],
                     tmp_path, monkeypatch)  # fmt: skip
    assert [i["params"]["title"] for i in listed.json()] == ["Add a sitemap"]
    summary_now = hub_get(small_hub, "/domains/website/summary")
    titles = [t["title"] for ws in summary_now["workstreams"] for t in ws["tasks"]]
    assert titles.count("Write launch announcement") == 1 and len(titles) == 6
