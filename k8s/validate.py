#!/usr/bin/env python3
"""Render every kustomize overlay and check it offline: strict schemas plus project rules.

Usage: python k8s/validate.py [--root DIR] [--yaml] [--k8s-version 1.29 ...]
Without --k8s-version, every target is checked against the minimum Kubernetes version the
manifests support and the newest one kubernetes-validate knows.
Exit 0 when every target renders and passes; 1 on any problem; 2 when kubectl is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import kubernetes_validate  # type: ignore[import-untyped]
    import yaml  # type: ignore[import-untyped]
except ImportError as missing:  # pragma: no cover - depends on the environment
    sys.exit(f"error: {missing.name} is not installed; run `make setup` (pip install -e '.[dev]')")
from fleet_policy import check_fleet, check_list_sources, fleet_listed
from manifest_policy import Doc, check_render, dig, ident
from schedule_policy import check_schedules, cronjob_domains
from workload_policy import (
    check_dns_egress,
    check_lifecycle,
    check_prometheus_rule,
    check_reseal,
    check_review,
    check_service_monitor,
    check_snapshot,
    check_workloads,
)

# The oldest Kubernetes these manifests are valid for: before 1.29 a podFailurePolicy rule must
# name onPodConditions even when it matches exit codes (docs/operations.md, "Upgrade").
MIN_K8S_VERSION = "1.29"
HERE = Path(__file__).resolve().parent
INSTALL_HINT = (
    "kubectl (1.27 or newer, with kustomize v5) is needed to render the overlays and was not "
    "found on PATH (or in $KUBECTL). Install it from the Kubernetes project's apt repository "
    "(https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/), or put a standalone "
    "`kustomize` v5 binary on PATH, or set $KUBECTL to a kubectl binary. Debian has no "
    "`kubectl` or `kustomize` package of its own: its `kubernetes-client` package is kubectl "
    "1.20, whose built-in kustomize is too old for the `labels` field these overlays use."
)


class ToolMissing(Exception):
    """No kubectl or kustomize binary to render with."""


@dataclass
class Target:
    """One kustomization to render: an overlay (with its domain) or the root."""

    path: Path
    domain: str | None
    review: bool = False
    fleet: bool = False
    docs: list[Doc] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def render_command() -> list[str]:
    """`kubectl kustomize`, else `kustomize build`; ToolMissing says how to install one."""
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize"]
    kustomize = shutil.which("kustomize")
    if kustomize:
        return [kustomize, "build"]
    raise ToolMissing(INSTALL_HINT)


def find_targets(root: Path) -> list[Target]:
    """Every overlay under root/overlays, then the root kustomization if there is one."""
    overlays = sorted(p.parent for p in (root / "overlays").glob("*/kustomization.yaml"))
    targets = [Target(path, path.name) for path in overlays]
    if (root / "kustomization.yaml").is_file():
        targets.append(Target(root, None))
    reviews = sorted(p.parent for p in root.glob("review*/kustomization.yaml"))
    targets += [Target(path, None, review=True) for path in reviews]
    fleets = sorted(p.parent for p in root.glob("fleet*/kustomization.yaml"))
    targets += [Target(path, None, fleet=True) for path in fleets]
    return targets


def newest_version() -> str:
    """The newest Kubernetes minor version whose schemas kubernetes-validate bundles."""
    return ".".join(str(kubernetes_validate.latest_version()).split(".")[:2])


def render(command: list[str], target: Target) -> str:
    """The rendered YAML of one target; problems are recorded on the target."""
    result = subprocess.run(
        [*command, str(target.path)], capture_output=True, text=True, timeout=120, check=False
    )
    if result.returncode != 0:
        target.problems.append(
            f"kustomize failed (kubectl 1.27+ / kustomize v5 needed): {result.stderr.strip()}"
        )
        return ""
    return result.stdout


def source_index(root: Path) -> dict[tuple[str, str], str]:
    """(kind, name) -> the file under root that defines it, to point errors at a file."""
    index: dict[tuple[str, str], str] = {}
    for path in sorted(root.rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if isinstance(doc, dict) and dig(doc, "metadata.name"):
                index[(str(doc.get("kind")), str(dig(doc, "metadata.name")))] = str(
                    path.relative_to(root)
                )
    return index


def origin(doc: Doc, target: Target, root: Path, index: dict[tuple[str, str], str]) -> str:
    """`base/cronjob.yaml via overlays/website` for a rendered object."""
    kind, name = str(doc.get("kind")), str(dig(doc, "metadata.name"))
    suffix = f"-{target.domain}" if target.domain else ""
    if not suffix and "-" in name:
        suffix = "-" + name.rsplit("-", 1)[1]
    source = index.get((kind, name)) or index.get((kind, name.removesuffix(suffix)), "?")
    via = target.path.relative_to(root) / "kustomization.yaml"
    return f"{source} via {via.as_posix()}"


def schema_problems(doc: Doc, version: str) -> list[str]:
    """Strict schema validation: unknown fields, wrong types and missing required fields fail."""
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(str(p) for p in exc.path) or "(top level)"
        return [f"{ident(doc)}: {path}: {exc.message} (Kubernetes {version})"]
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as exc:
        return [f"{ident(doc)}: no usable schema for Kubernetes {version}: {exc}"]
    return []


def load_docs(text: str, target: Target) -> list[Doc]:
    """Parse rendered YAML; anything that is not a mapping is a problem."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        target.problems.append(f"rendered YAML does not parse: {exc}")
        return []
    good = [d for d in docs if isinstance(d, dict)]
    if len(good) != len(docs):
        target.problems.append("rendered output holds a document that is not a mapping")
    return good


def check_target(target: Target, command: list[str], root: Path, versions: list[str]) -> str:
    """Render, schema-check and policy-check one target; returns the rendered YAML."""
    text = render(command, target)
    target.docs = load_docs(text, target)
    index = source_index(root)
    origins = {ident(doc): origin(doc, target, root, index) for doc in target.docs}
    found = [p for doc in target.docs for v in versions for p in schema_problems(doc, v)]
    if target.review:
        found += check_review(target.docs)
    elif target.fleet:
        # The fleet's spec.replicas is its shard count, kept in git with --shard (checked).
        found += check_fleet(target.docs)
        found += check_list_sources(target.path, target.docs)  # a list cut says why
        found += check_lifecycle(target.docs, allow={("StatefulSet", "spec.replicas")})
        found += check_dns_egress(target.docs)
    else:
        found += check_render(target.docs, target.domain)
        found += check_workloads(target.docs, target.domain)
    for problem in found:
        where = origins.get(problem.split(":", 1)[0])
        target.problems.append(f"{problem}  [{where}]" if where else problem)
    return text


def check_examples(root: Path, versions: list[str]) -> list[str]:
    """Each *.example.yaml stays valid (a Secret, a VolumeSnapshot, a PrometheusRule) and out of
    kustomizations."""
    problems = []
    for path in sorted(root.rglob("*.example.yaml")):
        rel = path.relative_to(root).as_posix()
        doc = _load_one(path)
        if isinstance(doc, dict) and doc.get("kind") == "VolumeSnapshot":
            found = check_snapshot(doc)  # a CRD: no bundled schema, checked field by field
        elif isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
            found = check_prometheus_rule(doc)  # a CRD too
        elif isinstance(doc, dict) and doc.get("kind") == "ServiceMonitor":
            found = check_service_monitor(doc)  # and this one
        else:
            found = [p for v in versions for p in schema_problems(doc, v)]
        if isinstance(doc, dict) and doc.get("kind") == "Job":
            found += check_reseal(doc)
        problems += [f"{rel}: {p}" for p in found]
        for kustomization in root.rglob("kustomization.yaml"):
            if path.name in kustomization.read_text(encoding="utf-8"):
                where = kustomization.relative_to(root)
                problems.append(f"{where}: must not include {path.name}")
    return problems


def across(targets: list[Target]) -> list[str]:
    """Rules between kustomizations: spread schedules, and no domain both in an overlay and
    in the fleet (two memory directories, two runners taking turns)."""
    runs = [
        pair for t in targets if t.domain is not None for pair in cronjob_domains(t.docs, t.domain)
    ]
    problems = list(check_schedules(runs))
    overlays = {domain for domain, _ in runs}
    for target in (t for t in targets if t.fleet):
        both = sorted(overlays & set(fleet_listed(target.docs)))
        if both:
            where = target.path.name
            problems.append(
                f"{where}: domains {both} are listed in the fleet and have an overlay; "
                "run each domain in one place"
            )
    return problems


def _load_one(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def listing(docs: list[Doc]) -> str:
    """One line per object: kind, namespace/name, and the CronJob's schedule and domain."""
    lines = []
    for doc in docs:
        namespace = dig(doc, "metadata.namespace")
        line = f"    {ident(doc)}" + (f" (namespace {namespace})" if namespace else "")
        if doc.get("kind") == "CronJob":
            line += f"  schedule={dig(doc, 'spec.schedule')!r} timeZone={dig(doc, 'spec.timeZone')}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check every target under --root; print a listing (or the YAML) and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=HERE, help="the k8s/ directory")
    parser.add_argument("--yaml", action="store_true", help="print the rendered YAML in full")
    parser.add_argument(
        "--k8s-version",
        action="append",
        dest="versions",
        help=f"schema version, repeatable (default: {MIN_K8S_VERSION} and the newest known)",
    )
    args = parser.parse_args(argv)
    versions = args.versions or [MIN_K8S_VERSION, newest_version()]
    root = args.root.resolve()
    try:
        command = render_command()
    except ToolMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    targets = find_targets(root)
    if not targets:
        print(f"error: no kustomization found under {root}/overlays", file=sys.stderr)
        return 1
    failed = 0
    for target in targets:
        text = check_target(target, command, root, versions)
        rel = target.path.relative_to(root).as_posix()
        name = "(root)" if rel == "." else rel
        status = "FAIL" if target.problems else "ok"
        cronjobs = sum(1 for d in target.docs if d.get("kind") == "CronJob")
        print(f"{status:4} {name}: {len(target.docs)} resources, {cronjobs} CronJob(s)")
        print(text if args.yaml else listing(target.docs))
        for problem in target.problems:
            print(f"  problem: {problem}")
        failed += bool(target.problems)
    secret_problems = check_examples(root, versions) + across(targets)
    for problem in secret_problems:
        print(f"  problem: {problem}")
    total = sum(len(t.docs) for t in targets)
    problems = sum(len(t.problems) for t in targets) + len(secret_problems)
    print(
        f"{len(targets)} kustomizations, {total} resources, Kubernetes {' and '.join(versions)} "
        f"schemas (strict) and project policy: {failed} kustomization(s) failed, "
        f"{problems} problem(s)"
    )
    if problems:
        print(f"error: {problems} problem(s) in {root}; see the lines above", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
