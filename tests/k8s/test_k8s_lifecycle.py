"""Kubernetes lifecycle: minimum version, operator-owned fields, shared volume, prune, review."""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from custodian_runtime.core.authority.own_writes import RETAIN
from support.paths import REPO
from support.servers import free_port

K8S = REPO / "k8s"
sys.path.append(str(K8S))  # the validator's modules import each other by plain name
import workload_policy  # noqa: E402


def run_validator(root: Path) -> subprocess.CompletedProcess[str]:
    """k8s/validate.py as `make k8s` runs it (both schema versions), on the given k8s/ tree."""
    return subprocess.run(
        [sys.executable, str(K8S / "validate.py"), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not found in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def k8s_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def rendered(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is needed to render the manifests (see k8s/validate.py)"
    out = subprocess.run(
        [kubectl, "kustomize", str(path)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_a_field_newer_than_the_minimum_version_fails_naming_that_version(k8s_copy: Path) -> None:
    edit(
        k8s_copy / "base" / "cronjob.yaml",
        "      backoffLimit: 1\n",
        "      backoffLimit: 1\n      managedBy: example.com/queue\n",
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "('managedBy' was unexpected) (Kubernetes 1.29)" in result.stdout
    newest = ".".join(kubernetes_validate.latest_version().split(".")[:2])
    assert f"(Kubernetes {newest})" not in result.stdout, "the newest version knows the field"
    assert f"Kubernetes 1.29 and {newest} schemas" in result.stdout


def test_each_lifecycle_volume_dns_prune_and_review_breakage_is_named(k8s_copy: Path) -> None:
    base, review = k8s_copy / "base", k8s_copy / "review" / "deployment.yaml"
    edit(
        base / "cronjob.yaml",
        "  failedJobsHistoryLimit: 3\n",
        "  failedJobsHistoryLimit: 3\n  suspend: false\n",
    )
    edit(
        base / "networkpolicy.yaml", "        - ipBlock:\n            cidr: 169.254.20.10/32\n", ""
    )
    edit(base / "prune-cronjob.yaml", 'args: ["--keep", "90d"]', 'args: ["--keep", "7d"]')
    overlay = k8s_copy / "overlays" / "website" / "kustomization.yaml"
    edit(
        overlay,
        "custodian/domain: website\n                        topologyKey",
        "app: x\n                        topologyKey",
    )
    edit(review, "  strategy:\n", "  replicas: 1\n  strategy:\n")
    edit(review, '"--host", "127.0.0.1"', '"--host", "0.0.0.0"')
    edit(review, "      affinity:\n", "      nodeSelector: {}\n      unused:\n")
    snapshot = k8s_copy / "backup" / "volumesnapshot.example.yaml"
    edit(
        snapshot,
        "persistentVolumeClaimName: custodian-memory-website",
        "persistentVolumeClaimName: other",
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    for expected in (
        "CronJob/custodian-website: spec.suspend is set; leave it out",
        "NetworkPolicy/custodian-egress-website: DNS egress lacks ipBlock 169.254.20.10/32",
        "CronJob/custodian-prune-website: container 'prune': --keep must be 31d or more",
        "CronJob/custodian-website: mounts custodian-memory-website (ReadWriteOnce: one node at a "
        "time) without a required podAffinity to custodian/domain=website",
        "Deployment/custodian-review-website: spec.replicas is set",
        "Deployment/custodian-review-website: mounts custodian-memory-website (ReadWriteOnce",
        "--host must stay 127.0.0.1",
        "volumesnapshot.example.yaml: VolumeSnapshot/custodian-memory-website-20261201: "
        "spec.source.persistentVolumeClaimName must name custodian-memory-*",
    ):
        assert expected in result.stdout, expected
    assert "CronJob/custodian-platform: mounts" not in result.stdout


def test_the_prune_keep_floor_is_how_far_the_authority_looks_back() -> None:
    assert RETAIN.days == workload_policy.MIN_KEEP_DAYS
    assert workload_policy.keep_days(["--keep", "90d"]) == 90
    assert workload_policy.keep_days(["--keep", "12w"]) == 84
    assert workload_policy.keep_days(["--keep", "90"]) is None


def test_the_base_sets_no_suspend_and_every_volume_pod_follows_its_domain() -> None:
    docs = rendered(K8S)
    cronjobs = [d for d in docs if d["kind"] == "CronJob"]
    assert {c["metadata"]["name"] for c in cronjobs} >= {
        "custodian-website",
        "custodian-prune-website",
        "custodian-platform",
        "custodian-prune-platform",
    }
    assert all("suspend" not in c["spec"] for c in cronjobs)
    for cj in cronjobs:
        pod = cj["spec"]["jobTemplate"]["spec"]["template"]
        domain = pod["metadata"]["labels"]["custodian/domain"]
        (term,) = pod["spec"]["affinity"]["podAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term == {
            "labelSelector": {"matchLabels": {"custodian/domain": domain}},
            "topologyKey": "kubernetes.io/hostname",
        }


def test_the_review_example_uses_the_base_image_and_stays_out_of_the_root() -> None:
    def images(path: Path) -> Any:
        return yaml.safe_load(path.read_text(encoding="utf-8"))["images"]

    assert images(K8S / "review" / "kustomization.yaml") == images(
        K8S / "base" / "kustomization.yaml"
    )
    root = yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))
    assert not any("review" in r or "backup" in r for r in root["resources"])


def _local_env(container: dict[str, Any], local: dict[str, str]) -> dict[str, str]:
    """The container's env names with local values; configMap-only values are dropped."""
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    for var in container.get("env") or []:
        name = var["name"]
        if name in local:
            env[name] = local[name]
        elif "value" in var:
            env[name] = var["value"]
    return env | local


def _executable(argv: list[str]) -> list[str]:
    return [str(Path(sys.executable).parent / argv[0]), *argv[1:]]


def test_the_prune_cronjob_command_runs_under_the_lock(tmp_path: Path) -> None:
    docs = rendered(K8S / "overlays" / "website")
    cj = next(d for d in docs if d["metadata"]["name"] == "custodian-prune-website")
    (container,) = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    memory = tmp_path / "memory"
    memory.mkdir()
    env = _local_env(
        container,
        {
            "CUSTODIAN_MEMORY_DIR": str(memory),
            "HOME": str(tmp_path),
            "CUSTODIAN_LOG_FORMAT": "json",
        },
    )
    assert env["CUSTODIAN_DOMAIN"] == "website"
    done = subprocess.run(
        _executable(container["command"] + container["args"]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "website: nothing pruned" in done.stdout
    assert (memory / "locks").is_dir(), "the prune took the domain's lock like a run"


def test_the_review_pod_command_serves_the_page_on_loopback_with_its_token(tmp_path: Path) -> None:
    (dep,) = rendered(K8S / "review")
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    argv = container["command"] + container["args"]
    port = str(free_port())
    argv[argv.index("--port") + 1] = port  # 8750 in the pod; a free one here
    memory = tmp_path / "memory"
    memory.mkdir()
    env = _local_env(
        container,
        {
            "CUSTODIAN_MEMORY_DIR": str(memory),
            "CUSTODIAN_CANON_DIR": str(REPO / "canon"),
            "HOME": str(tmp_path),
            "STATE_HUB_URL": "http://127.0.0.1:9",
            "STATE_HUB_TOKEN": "unused",
        },
    )
    server = subprocess.Popen(
        _executable(argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.search(rf"http://127\.0\.0\.1:{port}/\?token=\S+", line)
        assert match, line
        cookies = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
        with browser.open(match[0], timeout=30) as page:  # the token becomes a session cookie
            assert page.status == 200 and "custodian" in page.read().decode().lower()
        assert len(cookies) == 1
    finally:
        server.terminate()
        server.wait(timeout=30)
