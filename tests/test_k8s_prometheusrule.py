"""The example PrometheusRule: a valid rule file, outside every kustomization, on real metrics."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from custodian_runtime.core.metrics import METRICS

K8S = Path(__file__).resolve().parent.parent / "k8s"
RULE = K8S / "monitoring" / "prometheusrule.example.yaml"


def _rules() -> list[dict[str, object]]:
    doc = yaml.safe_load(RULE.read_text(encoding="utf-8"))
    assert doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "PrometheusRule"
    return [rule for group in doc["spec"]["groups"] for rule in group["rules"]]


def test_it_alerts_on_what_the_issue_names() -> None:
    alerts = {str(r["alert"]) for r in _rules()}
    assert alerts == {
        "CustodianNoRecentSuccess",
        "CustodianApprovalQueueDeep",
        "CustodianApprovalWaitingLong",
        "CustodianCostPerDayHigh",
        "CustodianJobFailed",
    }
    exprs = " ".join(str(r["expr"]) for r in _rules())
    assert "kube_job_status_failed" in exprs


def test_every_custodian_metric_it_names_is_one_the_runtime_exports() -> None:
    exported = {m.name for m in METRICS}
    named = set(re.findall(r"\bcustodian_[a-z_]+", " ".join(str(r["expr"]) for r in _rules())))
    assert named and named <= exported, named - exported


def test_it_is_in_no_kustomization() -> None:
    for kustomization in K8S.rglob("kustomization.yaml"):
        assert "prometheusrule" not in kustomization.read_text(encoding="utf-8")
