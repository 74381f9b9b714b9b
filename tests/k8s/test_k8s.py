"""The Kubernetes manifests validate, and the validator catches typos and policy violations."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import REPO

K8S = REPO / "k8s"
VALIDATE = K8S / "validate.py"


def run_validator(
    root: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run k8s/validate.py the way `make k8s` does, against the given k8s/ directory."""
    return subprocess.run(
        [sys.executable, str(VALIDATE), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


@pytest.fixture
def k8s_copy(tmp_path: Path) -> Path:
    """A scratch copy of k8s/ to break on purpose."""
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    """Replace one exact snippet in a manifest; fails loudly if the snippet moved."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not found in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_real_tree_passes_with_one_cronjob_per_domain() -> None:
    result = run_validator(K8S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   overlays/website: 6 resources, 2 CronJob(s)" in result.stdout
    assert "ok   overlays/platform: 6 resources, 2 CronJob(s)" in result.stdout
    assert "CronJob/custodian-website" in result.stdout
    assert "CronJob/custodian-prune-website" in result.stdout
    assert "ok   review: 1 resources" in result.stdout
    assert "Kubernetes 1.29 and " in result.stdout
    assert "0 problem(s)" in result.stdout


def test_typo_in_a_field_fails_strict_schema_naming_field_and_file(k8s_copy: Path) -> None:
    edit(
        k8s_copy / "base" / "cronjob.yaml", "concurrencyPolicy: Forbid", "concurencyPolicy: Forbid"
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "'concurencyPolicy' was unexpected" in result.stdout
    assert "base/cronjob.yaml via overlays/website/kustomization.yaml" in result.stdout
    assert "problem(s)" in result.stderr


def test_too_many_retries_is_a_policy_violation(k8s_copy: Path) -> None:
    edit(k8s_copy / "base" / "cronjob.yaml", "backoffLimit: 1", "backoffLimit: 3")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "spec.jobTemplate.spec.backoffLimit is 3; must be 0 or 1" in result.stdout


def test_overlay_with_the_wrong_domain_fails(k8s_copy: Path) -> None:
    edit(k8s_copy / "overlays" / "platform" / "kustomization.yaml", "value: platform", "value: web")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "CUSTODIAN_DOMAIN resolves to 'web'; must be 'platform'" in result.stdout
    assert "FAIL overlays/platform" in result.stdout
    assert "ok   overlays/website" in result.stdout


def test_deadline_longer_than_the_schedule_period_fails(k8s_copy: Path) -> None:
    edit(k8s_copy / "overlays" / "website" / "kustomization.yaml", "16 2/6 * * *", "*/15 * * * *")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "activeDeadlineSeconds is 1800; it must be below" in result.stdout
    assert "(900 s for '*/15 * * * *')" in result.stdout


def test_retrying_a_config_error_fails(k8s_copy: Path) -> None:
    edit(k8s_copy / "base" / "cronjob.yaml", "values: [2, 4, 6]", "values: [3, 4, 6]")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "has no FailJob rule for exit codes [2]" in result.stdout
    assert "fails the Job on exit codes [3]" in result.stdout


def test_writable_root_filesystem_fails(k8s_copy: Path) -> None:
    edit(
        k8s_copy / "base" / "cronjob.yaml",
        "readOnlyRootFilesystem: true",
        "readOnlyRootFilesystem: false",
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "securityContext.readOnlyRootFilesystem is False; must be True" in result.stdout


def test_a_rendered_secret_fails(k8s_copy: Path) -> None:
    shutil.copy(k8s_copy / "secret.example.yaml", k8s_copy / "base" / "secret.yaml")
    edit(
        k8s_copy / "base" / "kustomization.yaml",
        "  - cronjob.yaml\n",
        "  - cronjob.yaml\n  - secret.yaml\n",
    )
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "Secret/custodian-secrets-website: a Secret must not be rendered" in result.stdout


def test_missing_kubectl_says_how_to_install_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECTL"}
    env["PATH"] = str(tmp_path)  # an empty directory: no kubectl, no kustomize
    result = run_validator(K8S, env=env)
    assert result.returncode == 2
    assert "kubectl" in result.stderr
    assert "kubernetes-client" in result.stderr


def test_an_overlay_that_does_not_render_fails_naming_it(k8s_copy: Path) -> None:
    edit(k8s_copy / "overlays" / "website" / "kustomization.yaml", "../../base", "../../nowhere")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "FAIL overlays/website: 0 resources" in result.stdout
    assert "kustomize failed" in result.stdout
    assert "ok   overlays/platform" in result.stdout


def test_an_optional_or_missing_seal_key_fails(k8s_copy: Path) -> None:
    cronjob = k8s_copy / "base" / "cronjob.yaml"
    edit(cronjob, "key: CUSTODIAN_SEAL_KEY}", "key: CUSTODIAN_SEAL_KEY, optional: true}")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "CUSTODIAN_SEAL_KEY is optional in its secretKeyRef" in result.stdout
    edit(cronjob, "- name: CUSTODIAN_SEAL_KEY\n", "- name: CUSTODIAN_SEAL_KEY_UNUSED\n")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "env: CUSTODIAN_SEAL_KEY is not set" in result.stdout


def test_the_example_secret_holds_no_empty_or_usable_seal_key() -> None:
    import yaml

    secret = yaml.safe_load((K8S / "secret.example.yaml").read_text(encoding="utf-8"))
    placeholder = secret["stringData"]["CUSTODIAN_SEAL_KEY"]
    # Not empty (that used to mean "no seals"), and too short to pass for a key (exit 2 if used).
    assert placeholder and len(placeholder) < 32
    assert "CUSTODIAN_SEAL_KEY_PREVIOUS" not in secret["stringData"]
