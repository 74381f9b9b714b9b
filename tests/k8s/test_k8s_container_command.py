"""The container's command, run as the CronJob runs it, completes a run against the reference hub.

The command, arguments and environment names come from the rendered website overlay; only the
values that point into the cluster (hub URL, mounted paths) are swapped for local ones. The
working directory is not writable, HOME is a scratch directory, and as root every capability is
dropped (as `capabilities: drop: [ALL]` does), so permission bits hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from custodian_hub import ReferenceHub
from support.runs import CANON, REPO, hub_get

TOKEN = "cronjob-test-token"


def _rendered_cronjob() -> tuple[dict[str, Any], dict[str, str]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is needed to render the overlay (see k8s/validate.py)"
    out = subprocess.run(
        [kubectl, "kustomize", str(REPO / "k8s" / "overlays" / "website")],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    cronjob = next(
        d for d in docs if d["kind"] == "CronJob" and d["metadata"]["name"] == "custodian-website"
    )
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    return cronjob, config


def _container(cronjob: dict[str, Any]) -> dict[str, Any]:
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container: dict[str, Any] = pod["containers"][0]
    return container


def _environment(
    container: dict[str, Any], config: dict[str, str], local: dict[str, str]
) -> dict[str, str]:
    """Every variable the CronJob sets, with cluster-only values replaced by local ones."""
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    for var in container["env"]:
        name = var["name"]
        if name in local:
            env[name] = local[name]
        elif "value" in var:
            env[name] = var["value"]
        elif "configMapKeyRef" in var.get("valueFrom", {}):
            key = var["valueFrom"]["configMapKeyRef"]["key"]
            if key in config:
                env[name] = config[key]
    return env


def _unprivileged(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop capabilities as root"
    return [setpriv, "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--", *argv]


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, Path]:
    """A read-only working directory, a scratch HOME, an empty memory volume, a canon copy."""
    paths = {name: tmp_path / name for name in ("workdir", "home", "memory")}
    for path in paths.values():
        path.mkdir()
    paths["canon"] = tmp_path / "canon"
    shutil.copytree(CANON, paths["canon"])
    paths["workdir"].chmod(0o555)
    return paths


def test_the_cronjob_command_completes_a_run(
    tmp_path: Path, small_hub_with_token: ReferenceHub, sandbox: dict[str, Path]
) -> None:
    cronjob, config = _rendered_cronjob()
    container = _container(cronjob)
    # A canon larger than its constitution, read-only as the image's: its index goes to memory.
    (sandbox["canon"] / "adr").mkdir()
    (sandbox["canon"] / "adr" / "legal.md").write_text(
        "# Legal\n\n## Legal sign-off blockers\n\nA blocked legal sign-off waits.\n", "utf-8"
    )
    for path in (*sandbox["canon"].rglob("*"), sandbox["canon"]):
        path.chmod(0o555 if path.is_dir() else 0o444)
    local = {
        "STATE_HUB_URL": small_hub_with_token.url,
        "STATE_HUB_TOKEN": TOKEN,
        "CUSTODIAN_SEAL_KEY": "k8s-test-seal-key-" + "0" * 32,  # the CronJob requires one
        "CUSTODIAN_LLM": "offline",
        "CUSTODIAN_MEMORY_DIR": str(sandbox["memory"]),
        "CUSTODIAN_CANON_DIR": str(sandbox["canon"]),
        "HOME": str(sandbox["home"]),
    }
    env = _environment(container, config, local)
    assert env["CUSTODIAN_DOMAIN"] == "website" and env["CUSTODIAN_LOG_FORMAT"] == "json"
    executable = str(Path(sys.executable).parent / container["command"][0])
    argv = _unprivileged([executable, *container["command"][1:], *container["args"]])

    probe = subprocess.run(
        _unprivileged(["sh", "-c", "touch probe"]),
        cwd=sandbox["workdir"],
        capture_output=True,
        timeout=30,
    )
    assert probe.returncode != 0, "the working directory must not be writable for this test"

    done = subprocess.run(
        argv,
        cwd=sandbox["workdir"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert done.stdout.count("\n") == 1, "the summary is one JSON line"
    assert summary["status"] == "completed" and summary["domain"] == "website"
    assert summary["executed"], "the offline planner flags the stale and blocked tasks"

    phases = [json.loads(line) for line in done.stderr.splitlines()]
    assert {p["phase"] for p in phases} >= {
        "observe",
        "orient",
        "decide",
        "authorize",
        "act",
        "finish",
    }
    assert all(p["run_id"] == summary["run_id"] and p["domain"] == "website" for p in phases)
    assert all("duration_ms" in p and "outcome" in p for p in phases)
    assert "seals" not in {p["phase"] for p in phases}  # sealed: no "unsealed" line

    flags = hub_get(small_hub_with_token, "/flags?domain=website&status=open", token=TOKEN)["flags"]
    assert any(f["task_id"] == "web-t-2" and f["raised_by"] == "custodian" for f in flags)
    (note,) = (sandbox["memory"] / "working").glob("*-website.md")
    assert "`adr/legal.md § Legal sign-off blockers sha256=" in note.read_text("utf-8")
    assert len(list((sandbox["memory"] / "index").glob("canon-*.sqlite"))) == 1
    assert list(sandbox["workdir"].iterdir()) == []


def test_a_missing_domain_fails_fast_with_exit_2(
    small_hub_with_token: ReferenceHub, sandbox: dict[str, Path]
) -> None:
    cronjob, config = _rendered_cronjob()
    container = _container(cronjob)
    env = _environment(
        container,
        config,
        {
            "STATE_HUB_URL": small_hub_with_token.url,
            "STATE_HUB_TOKEN": TOKEN,
            "CUSTODIAN_DOMAIN": "",
            "CUSTODIAN_MEMORY_DIR": str(sandbox["memory"]),
            "CUSTODIAN_CANON_DIR": str(sandbox["canon"]),
            "HOME": str(sandbox["home"]),
            "CUSTODIAN_LLM": "offline",
        },
    )
    executable = str(Path(sys.executable).parent / container["command"][0])
    done = subprocess.run(
        _unprivileged([executable, *container["command"][1:], *container["args"]]),
        cwd=sandbox["workdir"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "CUSTODIAN_DOMAIN" in done.stderr
