"""Operations in the shipped manifests: metrics can be pushed, exit 75 pages nobody, a key
rotation runs in the cluster with both keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_k8s import K8S, edit, run_validator
from test_k8s_fleet import _render, scratch_copy


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env") or []}


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]
    template = (
        spec["jobTemplate"]["spec"]["template"] if "jobTemplate" in spec else spec["template"]
    )
    return list(template["spec"]["containers"])


def test_the_pushgateway_is_one_configmap_value_away_and_may_be_reached() -> None:
    docs = _render(K8S / "overlays" / "website")
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert config["data"]["CUSTODIAN_PUSHGATEWAY_URL"] == ""  # empty: off (settings read None)
    run = next(d for d in docs if d["kind"] == "CronJob" and "prune" not in d["metadata"]["name"])
    ref = _env(_containers(run)[0])["CUSTODIAN_PUSHGATEWAY_URL"]["valueFrom"]["configMapKeyRef"]
    assert ref["name"] == config["metadata"]["name"] and ref["key"] == "CUSTODIAN_PUSHGATEWAY_URL"
    policy = next(d for d in docs if d["kind"] == "NetworkPolicy")
    ports = [p["port"] for rule in policy["spec"]["egress"] for p in rule["ports"]]
    assert 9091 in ports


def test_exit_75_is_ignored_by_the_job_and_other_failures_are_not() -> None:
    for doc in _render(K8S / "overlays" / "website"):
        if doc["kind"] != "CronJob":
            continue
        rules = doc["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
        by_code = {
            code: rule["action"]
            for rule in rules
            for code in rule.get("onExitCodes", {}).get("values", [])
        }
        assert by_code[75] == "Ignore", doc["metadata"]["name"]
        assert all(action != "Ignore" for code, action in by_code.items() if code != 75)


def test_the_review_pod_and_the_fleet_carry_the_previous_seal_key_optionally() -> None:
    review = _render(K8S / "review")[0]
    fleet = next(d for d in _render(K8S / "fleet") if d["kind"] == "StatefulSet")
    for doc in (review, fleet):
        ref = _env(_containers(doc)[0])["CUSTODIAN_SEAL_KEY_PREVIOUS"]["valueFrom"]["secretKeyRef"]
        assert ref == {
            "name": "custodian-secrets",
            "key": "CUSTODIAN_SEAL_KEY_PREVIOUS",
            "optional": True,
        }


def test_the_reseal_job_has_both_keys_and_runs_reseal_on_the_domains_node() -> None:
    job = yaml.safe_load((K8S / "rotation" / "reseal-job.example.yaml").read_text())
    container = _containers(job)[0]
    assert container["command"] == ["custodian", "journal", "reseal"]
    env = _env(container)
    for name in ("CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"):
        assert "optional" not in env[name]["valueFrom"]["secretKeyRef"]
    terms = job["spec"]["template"]["spec"]["affinity"]["podAffinity"]
    assert terms["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] == {
        "matchLabels": {"custodian/domain": "website"}
    }


def test_the_validator_refuses_a_paging_75_and_a_reseal_without_the_old_key(
    tmp_path: Path,
) -> None:
    k8s_copy = scratch_copy(tmp_path)
    edit(k8s_copy / "base" / "cronjob.yaml", "values: [2, 4, 6]", "values: [2, 4, 6, 75]")
    edit(k8s_copy / "base" / "cronjob.yaml", "values: [75]", "values: [76]")
    edit(
        k8s_copy / "rotation" / "reseal-job.example.yaml",
        "key: CUSTODIAN_SEAL_KEY_PREVIOUS}",
        "key: CUSTODIAN_SEAL_KEY_PREVIOUS, optional: true}",
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "has no Ignore rule for exit codes [75]" in result.stdout
    assert "CUSTODIAN_SEAL_KEY_PREVIOUS must come from the Secret, not optional" in result.stdout
