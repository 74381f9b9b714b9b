"""The example PrometheusRule: a valid rule file, outside every kustomization, on real metrics,
and its alerts behave as tests/support/promtool/custodian-alerts.test.yaml says under
`promtool test rules` (Debian's `prometheus` package; make check installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from custodian_runtime.core.metrics import METRICS
from support.paths import REPO, SUPPORT

K8S = REPO / "k8s"
RULE = K8S / "monitoring" / "prometheusrule.example.yaml"
CASES = SUPPORT / "promtool" / "custodian-alerts.test.yaml"
PROMTOOL = shutil.which("promtool")


def _rules() -> list[dict[str, object]]:
    doc = yaml.safe_load(RULE.read_text(encoding="utf-8"))
    assert doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "PrometheusRule"
    return [rule for group in doc["spec"]["groups"] for rule in group["rules"]]


def test_it_alerts_on_what_the_issue_names() -> None:
    alerts = {str(r["alert"]) for r in _rules()}
    assert alerts == {
        "CustodianNoRecentSuccess",
        "CustodianFleetDomainNotChecked",
        "CustodianFleetDomainFailing",
        "CustodianFleetUnknownDomain",
        "CustodianFleetReplicaDown",
        "CustodianApprovalQueueDeep",
        "CustodianApprovalWaitingLong",
        "CustodianCostPerDayHigh",
        "CustodianJobFailed",
    }
    exprs = " ".join(str(r["expr"]) for r in _rules())
    # Failed pods are not failed Jobs; the cost is a counter's increase, not a gauge's samples.
    assert "kube_job_status_failed" not in exprs and "kube_job_failed{" in exprs
    assert "increase(custodian_cost_usd_total[1d])" in exprs


def test_every_custodian_metric_it_names_is_one_the_runtime_exports() -> None:
    from custodian_runtime.watch._figures import LoopFigures

    loop = re.findall(r"^(custodian_watch_[a-z_]+)", LoopFigures().exposition(), re.M)
    exported = {m.name for m in METRICS} | set(loop)
    named = set(re.findall(r"\bcustodian_[a-z_]+", " ".join(str(r["expr"]) for r in _rules())))
    assert named and named <= exported, named - exported


def test_it_is_in_no_kustomization() -> None:
    for kustomization in K8S.rglob("kustomization.yaml"):
        assert "prometheusrule" not in kustomization.read_text(encoding="utf-8")


def _promtool(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL, "install promtool: apt-get install prometheus (make check does as root)"
    return subprocess.run(
        [PROMTOOL, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )


def test_promtool_accepts_the_rules_and_every_case_holds(tmp_path: Path) -> None:
    doc = yaml.safe_load(RULE.read_text(encoding="utf-8"))
    rules = tmp_path / "custodian.rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": doc["spec"]["groups"]}), encoding="utf-8")
    checked = _promtool(tmp_path, "check", "rules", str(rules))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shutil.copy(CASES, tmp_path / CASES.name)
    tested = _promtool(tmp_path, "test", "rules", CASES.name)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_the_cases_cover_what_the_old_rules_got_wrong() -> None:
    text = CASES.read_text(encoding="utf-8")
    assert "kube_job_complete" in text  # a Job that fails once, then succeeds on its retry
    assert "between the same two scrapes" in text
    assert "never succeeded" in text
    assert text.count("alertname:") >= 6
    assert "A quiet domain for three days" in text  # checked every pass, never run: no page
    assert "custodian_last_check_timestamp_seconds" in text
