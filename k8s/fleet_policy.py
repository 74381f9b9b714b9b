"""Rules for the fleet (k8s/fleet): `custodian watch`, one shard per StatefulSet replica."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml  # type: ignore[import-untyped]
from fleet_page_policy import check_fleet_page
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
REVIEW = ["custodian", "review"]
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


def names_in(text: str) -> list[str]:
    """The names of a list as `custodian watch --domains-file` reads it: a line or a comma
    apart, `#` to the end of a line a comment (runtime watch/_select.read_domains)."""
    kept = (line.split("#", 1)[0] for line in text.splitlines())
    return [n.strip() for line in kept for n in line.split(",") if n.strip()]


def _listed_file(sts: Doc, container: Doc, docs: list[Doc], path: str) -> str | None:
    """The text of `path` as the pod sees it: a key of the ConfigMap mounted at its directory."""
    folder, _, key = path.rpartition("/")
    mounts = {str(m.get("mountPath")).rstrip("/"): m for m in container.get("volumeMounts") or []}
    mount = mounts.get(folder)
    if mount is None:
        return None
    volumes = {str(v.get("name")): v for v in dig(sts, f"{POD}.volumes") or []}
    source = dig(volumes.get(str(mount.get("name"))) or {}, "configMap.name")
    for doc in docs:
        if doc.get("kind") == "ConfigMap" and dig(doc, "metadata.name") == source:
            data = doc.get("data") or {}
            return str(data[key]) if key in data else None
    return None


def fleet_domains(container: Doc, docs: list[Doc], sts: Doc | None = None) -> list[str] | None:
    """The `--domains` or `--domains-file` list as rendered (None with --all-domains)."""
    argv = _argv(container)
    path = _flag(argv, "--domains-file")
    if path is not None:
        text = _listed_file(sts or {}, container, docs, path)
        return names_in(text or "")
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
    given = [f for f in ("--domains", "--domains-file", "--all-domains") if f in argv]
    if len(given) != 1:
        yield (
            f"{where}: give exactly one of --domains-file (the ConfigMap's list), --domains and "
            "--all-domains"
        )
    names = fleet_domains(container, docs, sts) or []
    if "--domains-file" in argv and not names:
        path = _flag(argv, "--domains-file")
        yield (
            f"{where}: --domains-file {path} names no domain: mount the ConfigMap that holds it "
            "(configMapGenerator files: domains.txt) at its directory, one domain a line"
        )
    if "--domains" in argv and not names:
        yield f"{where}: --domains resolves to no domain (check the ConfigMap's list)"
    bad = [n for n in names if not DOMAIN_RE.match(n)]
    if bad:
        yield f"{where}: the domain list holds invalid domain names {bad[:5]}"
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        yield f"{where}: the domain list names {twice[:5]} more than once"


ENV_LINE_MAX = 64 * 1024  # kustomize reads an env file by line and drops a longer one
CONFIGMAP_MAX = 1 << 20  # the API server refuses a ConfigMap over 1 MiB


def check_list_sources(fleet_dir: Path, docs: list[Doc]) -> list[str]:
    """Say why a domain list was cut: an env line kustomize drops, a ConfigMap too large, or a
    file whose names the render does not hold."""
    try:
        kustomization = yaml.safe_load((fleet_dir / "kustomization.yaml").read_text("utf-8"))
    except (OSError, yaml.YAMLError):
        return []
    problems = []
    for generator in (kustomization or {}).get("configMapGenerator") or []:
        for name in generator.get("envs") or []:
            problems += _long_lines(fleet_dir / str(name))
        for name in generator.get("files") or []:
            problems += _file_kept(fleet_dir / str(name).split("=")[-1], docs)
    for doc in (d for d in docs if d.get("kind") == "ConfigMap"):
        size = sum(len(str(v).encode()) for v in (doc.get("data") or {}).values())
        if size > CONFIGMAP_MAX:
            problems.append(
                f"{ident(doc)}: its data is {size >> 10} KiB, over the 1 MiB a ConfigMap may hold: "
                "split the fleet (a list per StatefulSet) or use --all-domains"
            )
    return problems


def _long_lines(path: Path) -> list[str]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return []
    return [
        f"{path.name} line {n}: {len(line) >> 10} KiB, and kustomize drops an env line over 64 KiB "
        f"without a word (the list renders empty); list the domains in a file, one a line "
        f"(configMapGenerator files: domains.txt, read with --domains-file)"
        for n, line in enumerate(lines, 1)
        if len(line) >= ENV_LINE_MAX - 1
    ]


def _file_kept(path: Path, docs: list[Doc]) -> list[str]:
    try:
        wanted = names_in(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    for doc in (d for d in docs if d.get("kind") == "ConfigMap"):
        data = doc.get("data") or {}
        if path.name in data:
            kept = names_in(str(data[path.name]))
            if kept != wanted:
                return [
                    f"{ident(doc)}: {path.name} lists {len(wanted)} domains but the render "
                    f"holds {len(kept)}: the list was cut"
                ]
    return []


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


def check_volume(sts: Doc, container: Doc, *, shared: bool = False) -> Iterator[str]:
    """One memory volume per replica, from volumeClaimTemplates, kept when scaled or deleted;
    ReadWriteMany when the fleet's one page (`shared`) mounts them all, else ReadWriteOnce."""
    templates = {dig(t, "metadata.name"): t for t in dig(sts, "spec.volumeClaimTemplates") or []}
    mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
    claim = templates.get(mounts.get(MEMORY_DIR))
    if claim is None:
        yield f"{ident(sts)}: {MEMORY_DIR} must be a volumeClaimTemplates volume (one per replica)"
    elif shared and dig(claim, "spec.accessModes") != ["ReadWriteMany"]:
        yield (
            f"{ident(sts)}: the memory claim template must be ReadWriteMany: the fleet's one "
            "page mounts every replica's volume (docs/operations.md, One page for the fleet)"
        )
    elif not shared and dig(claim, "spec.accessModes") != ["ReadWriteOnce"]:
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


def check_review_sidecar(where: str, container: Doc) -> Iterator[str]:
    """The replica's review page: `custodian review` on the pod's loopback, locked down, over the
    replica's memory, with the required seal key and no model key."""
    argv = _argv(container)
    if argv[:2] != REVIEW:
        yield f"{where}: the fleet's pod holds `custodian watch` and `custodian review` only"
        return
    if _flag(argv, "--host") != "127.0.0.1":
        yield f"{where}: --host 127.0.0.1: reach the page with kubectl port-forward"
    yield from check_locked_down(where, container)
    yield from check_mounts(where, container)
    env = _env(container)
    key = dig(env.get("CUSTODIAN_SEAL_KEY"), "valueFrom.secretKeyRef") or {}
    if not key or key.get("optional"):
        yield f"{where}: CUSTODIAN_SEAL_KEY must come from the Secret, not optional"
    for name in env:
        if name.endswith("_API_KEY") or name == "CLAUDE_CODE_OAUTH_TOKEN":
            yield f"{where}: {name}: the review page calls no model; leave keys out"


def check_fleet(docs: list[Doc]) -> list[str]:
    """Every rule of the fleet over one rendered kustomization."""
    problems = [
        f"{ident(d)}: a Secret must not be rendered" for d in docs if d.get("kind") == "Secret"
    ]
    sets = [d for d in docs if d.get("kind") == "StatefulSet"]
    if len(sets) != 1:
        return [*problems, f"the fleet renders {len(sets)} StatefulSets; it needs exactly one"]
    sts = sets[0]
    pages = [d for d in docs if d.get("kind") == "Deployment"]
    if pages:  # the fleet's one review page (k8s/fleet-page)
        problems.extend(check_fleet_page(sts, pages))
    problems.extend(check_pod_spec(sts, POD, containers_max=2))
    containers = dig(sts, f"{POD}.containers") or []
    watchers = [c for c in containers if _argv(c)[:2] == WATCH]
    if len(watchers) != 1:
        problems.append(f"{ident(sts)}: needs exactly one `custodian watch` container")
    for container in containers:
        where = f"{ident(sts)}: container {container.get('name')!r}"
        if container not in watchers:
            problems.extend(check_review_sidecar(where, container))
            continue
        for found in (
            check_locked_down(where, container),
            check_mounts(where, container),
            check_shard(sts, container),
            check_domains(sts, container, docs),
            check_scrape(sts, container, docs),
            check_volume(sts, container, shared=bool(pages)),
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
            found += fleet_domains(container, docs, sts) or []
    return found
