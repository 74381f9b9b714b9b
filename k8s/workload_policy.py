"""Rules beyond the run CronJob: the prune, the review pod, the shared volume, lifecycle, DNS."""

from __future__ import annotations

import re
from collections.abc import Iterator

from manifest_policy import (
    Doc,
    check_cronjob_spec,
    check_locked_down,
    check_mounts,
    check_pod_spec,
    dig,
    env_value,
    exit_codes,
    ident,
    is_prune,
)

# The longest window a rule of the authority looks back
# (custodian_runtime.core.authority.own_writes.RETAIN; tests/k8s/test_k8s_lifecycle.py keeps the two
# equal): a shorter keep could change a decision.
MIN_KEEP_DAYS = 31
HOSTNAME = "kubernetes.io/hostname"
CLAIM_PREFIX = "custodian-memory-"
DOMAIN_LABEL = "custodian/domain"
NODE_LOCAL_DNS = "169.254.20.10/32"
KEEP_RE = re.compile(r"^([1-9][0-9]*)([hdw])$")
KEEP_DAYS = {"h": 1 / 24, "d": 1, "w": 7}
# Fields whose value in git undoes an operator's action (suspend, scale, pause) on every apply.
LIFECYCLE = {
    "CronJob": ("spec.suspend", "spec.jobTemplate.spec.suspend"),
    "Deployment": ("spec.replicas", "spec.paused"),
    "StatefulSet": ("spec.replicas",),
}
TEMPLATE = {
    "CronJob": "spec.jobTemplate.spec.template",
    "Deployment": "spec.template",
    "Job": "spec.template",
}


def check_lifecycle(
    docs: list[Doc], allow: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset()
) -> Iterator[str]:
    """No field that puts back, on each apply, what an operator changed on purpose."""
    for doc in docs:
        for path in LIFECYCLE.get(str(doc.get("kind")), ()):
            if dig(doc, path) is not None and (str(doc.get("kind")), path) not in allow:
                yield (
                    f"{ident(doc)}: {path} is set; leave it out, or every `kubectl apply` "
                    f"undoes an operator's change of it"
                )


def _claims(spec: Doc) -> list[str]:
    volumes = spec.get("volumes") or []
    names = (dig(v, "persistentVolumeClaim.claimName") for v in volumes)
    return [str(n) for n in names if str(n).startswith(CLAIM_PREFIX)]


def _same_node_terms(spec: Doc) -> list[Doc]:
    terms = dig(spec, "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    return [t for t in terms or [] if t.get("topologyKey") == HOSTNAME]


def check_shared_volume(docs: list[Doc]) -> Iterator[str]:
    """Each pod on a domain's ReadWriteOnce volume requires the node of that domain's pods."""
    for doc in docs:
        template = dig(doc, TEMPLATE.get(str(doc.get("kind")), "-")) or {}
        spec = template.get("spec") or {}
        for claim in _claims(spec):
            domain = claim.removeprefix(CLAIM_PREFIX)
            wanted = {DOMAIN_LABEL: domain}
            if (dig(template, "metadata.labels") or {}).get(DOMAIN_LABEL) != domain:
                yield f"{ident(doc)}: mounts {claim}; its pods need {DOMAIN_LABEL}={domain}"
            terms = _same_node_terms(spec)
            if not any(dig(t, "labelSelector.matchLabels") == wanted for t in terms):
                yield (
                    f"{ident(doc)}: mounts {claim} (ReadWriteOnce: one node at a time) without "
                    f"a required podAffinity to {DOMAIN_LABEL}={domain} on {HOSTNAME}"
                )


def check_dns_egress(docs: list[Doc]) -> Iterator[str]:
    """DNS reaches both the cluster DNS pods and NodeLocal DNSCache's link-local address."""
    for doc in (d for d in docs if d.get("kind") == "NetworkPolicy"):
        rules = [r for r in dig(doc, "spec.egress") or [] if _dns_ports(r)]
        peers = [peer for r in rules for peer in r.get("to") or []]
        if not any(dig(p, "podSelector.matchLabels.k8s-app") == "kube-dns" for p in peers):
            yield f"{ident(doc)}: no egress rule allows UDP and TCP 53 to the kube-dns pods"
        if not any(dig(p, "ipBlock.cidr") == NODE_LOCAL_DNS for p in peers):
            yield f"{ident(doc)}: DNS egress lacks ipBlock {NODE_LOCAL_DNS} (NodeLocal DNSCache)"


def _dns_ports(rule: Doc) -> bool:
    ports = {(p.get("protocol", "TCP"), p.get("port")) for p in rule.get("ports") or []}
    return {("UDP", 53), ("TCP", 53)} <= ports


def keep_days(args: list[str]) -> float | None:
    """The `--keep` of a prune's arguments in days, or None when absent or malformed."""
    if "--keep" not in args[:-1]:
        return None
    match = KEEP_RE.match(args[args.index("--keep") + 1])
    return int(match[1]) * KEEP_DAYS[match[2]] if match else None


def check_prune(cj: Doc, docs: list[Doc], domain: str) -> Iterator[str]:
    """A prune CronJob: the schedule rules, no retry loop, a keep the authority allows."""
    yield from check_cronjob_spec(cj)
    yield from check_pod_spec(cj)
    job = "spec.jobTemplate.spec"
    if not isinstance(dig(cj, f"{job}.backoffLimit"), int) or dig(cj, f"{job}.backoffLimit") > 1:
        yield f"{ident(cj)}: {job}.backoffLimit must be 0 or 1"
    if 75 not in exit_codes(cj, "Ignore"):
        yield f"{ident(cj)}: {job}.podFailurePolicy must Ignore exit 75 (a run holds the lock)"
    for container in dig(cj, f"{job}.template.spec.containers") or []:
        where = f"{ident(cj)}: container {container.get('name')!r}"
        yield from check_locked_down(where, container)
        yield from check_mounts(where, container)
        days = keep_days(list(container.get("command") or []) + list(container.get("args") or []))
        if days is None or days < MIN_KEEP_DAYS:
            yield f"{where}: --keep must be {MIN_KEEP_DAYS}d or more (the authority looks back)"
        env = {e.get("name"): e for e in container.get("env") or []}
        actual = env_value(env.get("CUSTODIAN_DOMAIN", {}), docs)
        if actual != domain:
            yield f"{where}: CUSTODIAN_DOMAIN resolves to {actual!r}; must be {domain!r}"


def check_workloads(docs: list[Doc], overlay_domain: str | None) -> list[str]:
    """Prunes, lifecycle fields, the shared volume and DNS over one rendered kustomization."""
    problems = [*check_lifecycle(docs), *check_shared_volume(docs), *check_dns_egress(docs)]
    prunes = [d for d in docs if d.get("kind") == "CronJob" and is_prune(d)]
    if overlay_domain and not prunes:
        problems.append(f"no journal prune CronJob for {overlay_domain} (base/prune-cronjob.yaml)")
    for cj in prunes:
        name = str(dig(cj, "metadata.name"))
        problems.extend(check_prune(cj, docs, overlay_domain or name.rsplit("prune-", 1)[-1]))
    return problems


def check_review(docs: list[Doc]) -> list[str]:
    """The review example: one loopback page per domain, locked down, no model key, same node."""
    problems = [*check_lifecycle(docs), *check_shared_volume(docs)]
    deployments = [d for d in docs if d.get("kind") == "Deployment"]
    if not deployments:
        problems.append("no review Deployment rendered")
    for dep in deployments:
        problems.extend(check_pod_spec(dep, "spec.template.spec"))
        if dig(dep, "spec.strategy.type") != "Recreate":
            problems.append(
                f"{ident(dep)}: spec.strategy.type must be Recreate (one pod at a time)"
            )
        for container in dig(dep, "spec.template.spec.containers") or []:
            problems.extend(_review_container(dep, container))
    return problems


def _review_container(dep: Doc, container: Doc) -> Iterator[str]:
    where = f"{ident(dep)}: container {container.get('name')!r}"
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if argv[:2] != ["custodian", "review"]:
        yield f"{where}: command must be `custodian review`, not {argv!r}"
    if "--host" in argv[:-1] and argv[argv.index("--host") + 1] != "127.0.0.1":
        yield f"{where}: --host must stay 127.0.0.1; reach the page with kubectl port-forward"
    yield from check_locked_down(where, container)
    yield from check_mounts(where, container)
    for entry in container.get("env") or []:
        if str(entry.get("name")).endswith("_API_KEY"):
            yield f"{where}: {entry.get('name')}: the review page calls no model; leave keys out"


def check_snapshot(doc: Doc) -> list[str]:
    """A VolumeSnapshot (snapshot.storage.k8s.io/v1) of one domain's memory claim."""
    where = f"{ident(doc)}"
    problems = []
    if doc.get("apiVersion") != "snapshot.storage.k8s.io/v1" or doc.get("kind") != "VolumeSnapshot":
        problems.append(f"{where}: must be apiVersion snapshot.storage.k8s.io/v1, VolumeSnapshot")
    spec = doc.get("spec") or {}
    if unknown := set(spec) - {"source", "volumeSnapshotClassName"}:
        problems.append(f"{where}: spec has unknown fields {sorted(unknown)}")
    source = spec.get("source") or {}
    claim = str(source.get("persistentVolumeClaimName", ""))
    if set(source) != {"persistentVolumeClaimName"} or not claim.startswith(CLAIM_PREFIX):
        problems.append(f"{where}: spec.source.persistentVolumeClaimName must name {CLAIM_PREFIX}*")
    if dig(doc, "metadata.namespace") != "custodian":
        problems.append(f"{where}: metadata.namespace must be custodian (the claim's)")
    return problems


def check_prometheus_rule(doc: Doc) -> list[str]:
    """A PrometheusRule (monitoring.coreos.com/v1): every rule an alert with an expression."""
    where = f"{ident(doc)}"
    if doc.get("apiVersion") != "monitoring.coreos.com/v1" or doc.get("kind") != "PrometheusRule":
        return [f"{where}: must be apiVersion monitoring.coreos.com/v1, PrometheusRule"]
    groups = dig(doc, "spec.groups") or []
    problems = [] if groups else [f"{where}: spec.groups is empty"]
    for group in groups:
        for rule in group.get("rules") or []:
            if not rule.get("alert") or not str(rule.get("expr", "")).strip():
                problems.append(
                    f"{where}: every rule of group {group.get('name')} needs alert, expr"
                )
    return problems


def check_service_monitor(doc: Doc) -> list[str]:
    """A ServiceMonitor (monitoring.coreos.com/v1) scraping the fleet's metrics port."""
    where = f"{ident(doc)}"
    if doc.get("apiVersion") != "monitoring.coreos.com/v1" or doc.get("kind") != "ServiceMonitor":
        return [f"{where}: must be apiVersion monitoring.coreos.com/v1, ServiceMonitor"]
    problems = []
    if not dig(doc, "spec.selector.matchLabels"):
        problems.append(f"{where}: spec.selector.matchLabels must select the fleet's Service")
    endpoints = dig(doc, "spec.endpoints") or []
    if not any(e.get("port") == "metrics" for e in endpoints):
        problems.append(f"{where}: spec.endpoints needs the `metrics` port")
    return problems


def check_reseal(doc: Doc) -> list[str]:
    """A reseal Job: `custodian journal reseal` with both seal keys, on the domain's node."""
    problems = [*check_shared_volume([doc]), *check_pod_spec(doc, "spec.template.spec")]
    for container in dig(doc, "spec.template.spec.containers") or []:
        where = f"{ident(doc)}: container {container.get('name')!r}"
        if list(container.get("command") or [])[:3] != ["custodian", "journal", "reseal"]:
            problems.append(f"{where}: command must be `custodian journal reseal`")
        env = {e.get("name"): e for e in container.get("env") or []}
        for name in ("CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"):
            ref = dig(env.get(name), "valueFrom.secretKeyRef")
            if not ref or ref.get("optional"):
                problems.append(f"{where}: {name} must come from the Secret, not optional")
        problems.extend(check_locked_down(where, container))
        problems.extend(check_mounts(where, container))
    return problems
