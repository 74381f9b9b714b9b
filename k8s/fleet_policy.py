"""Rules for the fleet (k8s/fleet): `custodian watch`, one shard per StatefulSet replica."""

from __future__ import annotations

import re
from collections.abc import Iterator

from manifest_policy import (
    DOMAIN_RE,
    MEMORY_DIR,
    Doc,
    check_locked_down,
    check_mounts,
    check_pod_spec,
    dig,
    env_value,
    ident,
)

WATCH = ["custodian", "watch"]
POD_INDEX = "metadata.labels['apps.kubernetes.io/pod-index']"
SHARD_RE = re.compile(r"^\$\((?P<var>[A-Z_]+)\)/(?P<count>[1-9][0-9]*)$")
VAR_RE = re.compile(r"^\$\((?P<var>[A-Z_]+)\)$")
POD = "spec.template.spec"
KINDS = ("StatefulSet", "Service", "PodDisruptionBudget", "NetworkPolicy", "ServiceAccount")


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv[:-1] else None


def _argv(container: Doc) -> list[str]:
    return [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]


def _env(container: Doc) -> dict[str, Doc]:
    return {str(e.get("name")): e for e in container.get("env") or []}


def check_shard(sts: Doc, container: Doc) -> Iterator[str]:
    """`--shard $(VAR)/N`: VAR is the pod's ordinal and N is spec.replicas."""
    where = f"{ident(sts)}: container {container.get('name')!r}"
    shard = SHARD_RE.match(_flag(_argv(container), "--shard") or "")
    if shard is None:
        yield f"{where}: needs `--shard $(CUSTODIAN_SHARD_INDEX)/N`, N = spec.replicas"
        return
    ref = dig(_env(container).get(shard["var"]), "valueFrom.fieldRef.fieldPath")
    if ref != POD_INDEX:
        yield f"{where}: {shard['var']} must come from fieldRef {POD_INDEX} (the pod's ordinal)"
    replicas = dig(sts, "spec.replicas")
    if replicas != int(shard["count"]):
        yield (
            f"{ident(sts)}: spec.replicas is {replicas!r} but --shard names {shard['count']} "
            "shards; change both together (docs/operations.md, Reshard the fleet)"
        )


def fleet_domains(container: Doc, docs: list[Doc]) -> list[str] | None:
    """The `--domains` list as rendered (None with --all-domains)."""
    argv = _argv(container)
    text = _flag(argv, "--domains")
    if text is None:
        return None
    var = VAR_RE.match(text)
    if var:
        text = env_value(_env(container).get(var["var"]) or {}, docs) or ""
    return [name.strip() for name in text.split(",") if name.strip()]


def check_domains(sts: Doc, container: Doc, docs: list[Doc]) -> Iterator[str]:
    """A domain list as data or --all-domains; valid names, each once."""
    argv = _argv(container)
    where = f"{ident(sts)}: container {container.get('name')!r}"
    if argv[:2] != WATCH:
        yield f"{where}: command must be {WATCH!r}, not {argv[:2]!r}"
    if ("--all-domains" in argv) == ("--domains" in argv):
        yield f"{where}: give exactly one of --domains (the ConfigMap's list) and --all-domains"
    names = fleet_domains(container, docs) or []
    if "--domains" in argv and not names:
        yield f"{where}: --domains resolves to no domain (check domains.env)"
    bad = [n for n in names if not DOMAIN_RE.match(n)]
    if bad:
        yield f"{where}: --domains holds invalid domain names {bad[:5]}"
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        yield f"{where}: --domains names {twice[:5]} more than once"


def check_scrape(sts: Doc, container: Doc, docs: list[Doc]) -> Iterator[str]:
    """The metrics port is served on the pod's address, annotated, and behind a headless Service."""
    where = f"{ident(sts)}: container {container.get('name')!r}"
    argv = _argv(container)
    port = _flag(argv, "--metrics-port")
    ports = {str(p.get("containerPort")): p.get("name") for p in container.get("ports") or []}
    if port is None or port not in ports:
        yield f"{where}: --metrics-port {port} needs a matching containerPort"
    if _flag(argv, "--metrics-host") in (None, "127.0.0.1"):
        yield f"{where}: --metrics-host must be the pod's address (0.0.0.0) to be scraped"
    notes = dig(sts, "spec.template.metadata.annotations") or {}
    if notes.get("prometheus.io/scrape") != "true" or notes.get("prometheus.io/port") != port:
        yield f"{ident(sts)}: pod annotations prometheus.io/scrape and /port {port} are not set"
    service = next(
        (
            d
            for d in docs
            if d.get("kind") == "Service"
            and ident(d).endswith("/" + str(dig(sts, "spec.serviceName")))
        ),
        None,
    )
    if service is None or dig(service, "spec.clusterIP") != "None":
        yield f"{ident(sts)}: spec.serviceName must name a headless Service (clusterIP: None)"


def check_volume(sts: Doc, container: Doc) -> Iterator[str]:
    """One memory volume per replica, from volumeClaimTemplates, kept when scaled or deleted."""
    templates = {dig(t, "metadata.name"): t for t in dig(sts, "spec.volumeClaimTemplates") or []}
    mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
    claim = templates.get(mounts.get(MEMORY_DIR))
    if claim is None:
        yield f"{ident(sts)}: {MEMORY_DIR} must be a volumeClaimTemplates volume (one per replica)"
    elif dig(claim, "spec.accessModes") != ["ReadWriteOnce"]:
        yield f"{ident(sts)}: the memory claim template must be ReadWriteOnce"
    for when in ("whenDeleted", "whenScaled"):
        if dig(sts, f"spec.persistentVolumeClaimRetentionPolicy.{when}") != "Retain":
            yield f"{ident(sts)}: persistentVolumeClaimRetentionPolicy.{when} must be Retain"


def check_seal_keys(sts: Doc, container: Doc) -> Iterator[str]:
    """The seal key is required; the previous one is there, optional, for a rotation."""
    env = _env(container)
    key = dig(env.get("CUSTODIAN_SEAL_KEY"), "valueFrom.secretKeyRef") or {}
    previous = dig(env.get("CUSTODIAN_SEAL_KEY_PREVIOUS"), "valueFrom.secretKeyRef") or {}
    if not key or key.get("optional"):
        yield f"{ident(sts)}: CUSTODIAN_SEAL_KEY must come from the Secret, not optional"
    if not previous or not previous.get("optional"):
        yield f"{ident(sts)}: CUSTODIAN_SEAL_KEY_PREVIOUS must come from the Secret, optional"


def _selects(selector: Doc, labels: dict[str, str]) -> bool:
    wanted = selector.get("matchLabels") or {}
    return bool(wanted) and all(labels.get(k) == v for k, v in wanted.items())


def check_companions(sts: Doc, docs: list[Doc]) -> Iterator[str]:
    """A PodDisruptionBudget and an egress NetworkPolicy select the replicas."""
    labels = dig(sts, "spec.template.metadata.labels") or {}
    budgets = [d for d in docs if d.get("kind") == "PodDisruptionBudget"]
    if not any(_selects(dig(b, "spec.selector") or {}, labels) for b in budgets):
        yield f"{ident(sts)}: no PodDisruptionBudget selects its pods"
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    mine = [p for p in policies if _selects(dig(p, "spec.podSelector") or {}, labels)]
    if not any("Egress" in (dig(p, "spec.policyTypes") or []) for p in mine):
        yield f"{ident(sts)}: no NetworkPolicy with policyTypes Egress selects its pods"
    for policy in mine:
        for rule in dig(policy, "spec.egress") or []:
            if not rule.get("to") or not rule.get("ports"):
                yield f"{ident(policy)}: an egress rule without `to` and `ports` allows too much"


def check_fleet(docs: list[Doc]) -> list[str]:
    """Every rule of the fleet over one rendered kustomization."""
    problems = [
        f"{ident(d)}: a Secret must not be rendered" for d in docs if d.get("kind") == "Secret"
    ]
    sets = [d for d in docs if d.get("kind") == "StatefulSet"]
    if len(sets) != 1:
        return [*problems, f"the fleet renders {len(sets)} StatefulSets; it needs exactly one"]
    sts = sets[0]
    problems.extend(check_pod_spec(sts, POD))
    containers = dig(sts, f"{POD}.containers") or []
    for container in containers:
        where = f"{ident(sts)}: container {container.get('name')!r}"
        for found in (
            check_locked_down(where, container),
            check_mounts(where, container),
            check_shard(sts, container),
            check_domains(sts, container, docs),
            check_scrape(sts, container, docs),
            check_volume(sts, container),
            check_seal_keys(sts, container),
        ):
            problems.extend(found)
    problems.extend(check_companions(sts, docs))
    return problems


def fleet_listed(docs: list[Doc]) -> list[str]:
    """The domains the fleet's ConfigMap lists (empty with --all-domains)."""
    found: list[str] = []
    for sts in (d for d in docs if d.get("kind") == "StatefulSet"):
        for container in dig(sts, f"{POD}.containers") or []:
            found += fleet_domains(container, docs) or []
    return found
