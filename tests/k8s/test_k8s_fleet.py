"""The fleet's manifests (k8s/fleet) and the per-domain CronJobs' spread, through `make k8s`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from test_k8s import K8S, edit, run_validator

sys.path.insert(0, str(K8S))
from schedule_policy import slot, spread_schedule


def _render(root: Path) -> list[dict[str, object]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is needed to render (see k8s/validate.py)"
    out = subprocess.run(
        [kubectl, "kustomize", str(root)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _objects(docs: list[dict[str, object]]) -> list[tuple[str, str]]:
    """(kind, name) with the generated ConfigMap's content hash cut off."""
    found = []
    for doc in docs:
        name = str(doc["metadata"]["name"])  # type: ignore[index]
        if name.startswith("custodian-fleet-domains-"):
            name = "custodian-fleet-domains"
        found.append((str(doc["kind"]), name))
    return sorted(found)


def scratch_copy(tmp_path: Path) -> Path:
    """A copy of k8s/ to change."""
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _fleet_only(tmp_path: Path, domains: list[str]) -> Path:
    root = tmp_path / "k8s"
    root.mkdir(parents=True)
    shutil.copytree(K8S / "fleet", root / "fleet")
    for name in ("manifest_policy.py", "cron_period.py"):
        shutil.copy(K8S / name, root / name)
    listed = root / "fleet" / "domains.txt"
    listed.write_text("".join(f"{d}\n" for d in domains), encoding="utf-8")
    return root


def test_the_fleet_passes_strictly_on_both_versions() -> None:
    result = run_validator(K8S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   fleet: 7 resources" in result.stdout
    for kind in ("StatefulSet", "PodDisruptionBudget", "NetworkPolicy", "Service"):
        assert f"{kind}/custodian-fleet" in result.stdout


def test_ten_thousand_domains_render_as_the_same_objects_as_ten(tmp_path: Path) -> None:
    ten = _fleet_only(tmp_path / "ten", [f"d{n:04d}" for n in range(10)])
    thousand = _fleet_only(tmp_path / "thousand", [f"domain-{n:05d}" for n in range(10_000)])
    began = time.perf_counter()
    small = _render(ten / "fleet")
    middle = time.perf_counter()
    large = _render(thousand / "fleet")
    ended = time.perf_counter()
    assert _objects(small) == _objects(large) and len(small) == 7
    listed = next(d for d in large if d["kind"] == "ConfigMap" and "domains" in str(d["metadata"]))
    assert len(listed["data"]["domains.txt"].split()) == 10_000  # type: ignore[index]
    print(f"render: 10 domains {middle - began:.3f} s, 10,000 domains {ended - middle:.3f} s")
    checked = run_validator(thousand)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok   fleet: 7 resources" in checked.stdout


def test_the_validator_names_what_is_wrong_with_a_fleet(tmp_path: Path) -> None:
    root = _fleet_only(tmp_path, ["mobile", "mobile", "Bad_Name"])
    fleet = root / "fleet"
    edit(fleet / "statefulset.yaml", "  replicas: 2", "  replicas: 3")
    edit(fleet / "kustomization.yaml", "  - poddisruptionbudget.yaml\n", "")
    edit(fleet / "statefulset.yaml", "key: CUSTODIAN_SEAL_KEY_PREVIOUS, optional: true", "key: X")
    edit(fleet / "statefulset.yaml", '- "0.0.0.0"', '- "127.0.0.1"')
    # The review container: bound beyond the loopback, with a model key.
    edit(fleet / "statefulset.yaml", 'args: ["--host", "127.0.0.1"', 'args: ["--host", "0.0.0.0"')
    edit(
        fleet / "statefulset.yaml",
        "            - name: CUSTODIAN_REVIEW_TOKENS_FILE",
        "            - name: OPENAI_API_KEY\n              value: sk\n"
        "            - name: CUSTODIAN_REVIEW_TOKENS_FILE",
    )
    result = run_validator(root)
    assert result.returncode == 1
    out = result.stdout
    assert "spec.replicas is 3 but --shard names 2 shards" in out
    assert "no PodDisruptionBudget selects its pods" in out
    assert "names ['mobile'] more than once" in out
    assert "invalid domain names ['Bad_Name']" in out
    assert "CUSTODIAN_SEAL_KEY_PREVIOUS must come from the Secret, optional" in out
    assert "--metrics-host must be the pod's address" in out
    assert "container 'review': --host 127.0.0.1: reach the page with kubectl port-forward" in out
    assert "container 'review': OPENAI_API_KEY: the review page calls no model" in out


def test_a_list_kustomize_would_cut_is_named_with_why(tmp_path: Path) -> None:
    root = _fleet_only(tmp_path, ["mobile"])
    fleet = root / "fleet"
    names = ",".join(f"domain-{n:05d}" for n in range(6000))  # 78 KiB on one line
    (fleet / "domains.env").write_text(f"CUSTODIAN_FLEET_DOMAINS={names}\n", encoding="utf-8")
    edit(
        fleet / "kustomization.yaml",
        "    files:\n      - domains.txt",
        "    envs:\n      - domains.env",
    )
    by_file = '- "--domains-file"\n            - "/etc/custodian/fleet/domains.txt"'
    edit(
        fleet / "statefulset.yaml",
        by_file,
        '- "--domains"\n            - "$(CUSTODIAN_FLEET_DOMAINS)"',
    )
    edit(fleet / "statefulset.yaml", "          env:\n", "          env:\n            - name: "
         "CUSTODIAN_FLEET_DOMAINS\n              valueFrom:\n                configMapKeyRef: "
         "{name: custodian-fleet-domains, key: CUSTODIAN_FLEET_DOMAINS}\n")  # fmt: skip
    result = run_validator(root)
    assert result.returncode == 1
    out = result.stdout
    assert "domains.env line 1: 76 KiB, and kustomize drops an env line over 64 KiB" in out, out
    assert "--domains resolves to no domain" in out


def test_the_schedule_slot_is_the_names_hash() -> None:
    minute, hour = slot("website")
    assert (minute, hour) == (16, 2)  # pinned: a slot that moved would move every domain
    assert spread_schedule("website", "6h") == "16 2/6 * * *"
    assert spread_schedule("website", "1h") == "16 * * * *"
    assert spread_schedule("platform", "weekdays") == "51 19 * * 1-5"
    slots = {slot(f"d{n:04d}") for n in range(1000)}
    assert len({m for m, _ in slots}) == 60  # a thousand domains use every minute of the hour
    with pytest.raises(ValueError, match="hours that divide a day"):
        spread_schedule("website", "5h")


def test_new_domain_spreads_and_make_k8s_refuses_two_on_one_schedule(
    tmp_path: Path,
) -> None:
    k8s_copy = scratch_copy(tmp_path)
    script = K8S / "new_domain.py"
    added = subprocess.run(
        [sys.executable, str(script), "search", "--every", "6h", "--root", str(k8s_copy)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    overlay = (k8s_copy / "overlays" / "search" / "kustomization.yaml").read_text()
    assert f'schedule: "{spread_schedule("search", "6h")}"' in overlay
    assert "website" not in overlay
    assert "- overlays/search" in (k8s_copy / "kustomization.yaml").read_text()
    # Copied by hand with the same schedule as website: refused, both domains named.
    edit(
        k8s_copy / "overlays" / "search" / "kustomization.yaml",
        spread_schedule("search", "6h"),
        "16 2/6 * * *",
    )
    # And a domain both in the fleet's list and in an overlay.
    edit(k8s_copy / "fleet" / "domains.txt", "mobile\n", "mobile\nplatform\n")
    result = run_validator(k8s_copy)
    assert result.returncode == 1
    assert "domains search, website share the schedule '16 2/6 * * *' (Etc/UTC)" in result.stdout
    assert "CronJob/custodian-search" in result.stdout
    assert "domains ['platform', 'search'] are listed in the fleet and have" in result.stdout, [
        line for line in result.stdout.splitlines() if "problem" in line
    ]


def test_a_domains_schedule_slot_is_cut_by_the_same_hash_as_its_watch_shard() -> None:
    # The k8s scripts run without the runtime installed, so they keep their own copy of the
    # hash; this holds the two to one rule.
    from custodian_runtime.watch import shard_of

    for domain in ("website", "platform", "d0001", "d0999", "ünïcode"):
        hour, minute = divmod(shard_of(domain, 24 * 60), 60)
        assert slot(domain) == (minute, hour), domain


def _with_page(tmp_path: Path) -> Path:
    root = _fleet_only(tmp_path, ["mobile", "search"])
    shutil.copytree(K8S / "fleet-page", root / "fleet-page")
    return root


def test_the_fleet_s_one_page_mounts_every_shard(tmp_path: Path) -> None:
    root = _with_page(tmp_path)
    passed = run_validator(root)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "ok   fleet-page: 9 resources" in passed.stdout
    page = root / "fleet-page"
    # A third shard the page does not mount; the claims left ReadWriteOnce; a sidecar kept.
    edit(root / "fleet" / "statefulset.yaml", "  replicas: 2", "  replicas: 3")
    edit(root / "fleet" / "statefulset.yaml", "INDEX)/2", "INDEX)/3")
    edit(page / "statefulset-patch.yaml", '["ReadWriteMany"]', '["ReadWriteOnce"]')
    edit(
        page / "statefulset-patch.yaml",
        "$patch: delete\n      volumes",
        "imagePullPolicy: Always\n      volumes",
    )
    edit(page / "deployment.yaml", '/shards/1"\n', '/shards/0"\n')
    out = run_validator(root).stdout
    assert "missing ['memory-custodian-fleet-1', 'memory-custodian-fleet-2'] (docs/" in out
    assert "the memory claim template must be ReadWriteMany: the fleet's one page" in out
    assert "with one page for the fleet, a replica's pod holds no review page" in out
    assert "claim memory-custodian-fleet-0 is given twice" in out
