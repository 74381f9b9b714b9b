"""Rules for the fleet's one review page (k8s/fleet-page): a Deployment whose `custodian review`
mounts every shard's memory volume, one `--memory` each, over ReadWriteMany claims."""

from __future__ import annotations

from collections.abc import Iterator

from manifest_policy import Doc, check_locked_down, check_pod_spec, dig, ident

REVIEW = ["custodian", "review"]
PAGE_POD = "spec.template.spec"


def _argv(container: Doc) -> list[str]:
    return [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]


def _memories(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--memory"]


def shard_claims(sts: Doc) -> list[str]:
    """The claims the StatefulSet makes for its memory, one a replica: <template>-<sts>-<i>."""
    templates = [dig(t, "metadata.name") for t in dig(sts, "spec.volumeClaimTemplates") or []]
    replicas = dig(sts, "spec.replicas")
    if "memory" not in templates or not isinstance(replicas, int):
        return []
    name = dig(sts, "metadata.name")
    return [f"memory-{name}-{i}" for i in range(replicas)]


def _claims_of(page: Doc, container: Doc) -> Iterator[str | None]:
    """The claim mounted at each `--memory` of the page, in order (None: not a claim)."""
    volumes = {v.get("name"): v for v in dig(page, f"{PAGE_POD}.volumes") or []}
    mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
    for path in _memories(_argv(container)):
        volume = volumes.get(mounts.get(path)) or {}
        yield dig(volume, "persistentVolumeClaim.claimName")


def check_page_shards(sts: Doc, page: Doc, container: Doc) -> Iterator[str]:
    """Every shard's claim, and only those, each mounted once and given as a `--memory`."""
    where = f"{ident(page)}: container {container.get('name')!r}"
    expected = shard_claims(sts)
    found = list(_claims_of(page, container))
    if None in found:
        yield f"{where}: each --memory must be the mount path of a shard's memory claim"
    named = [c for c in found if c is not None]
    twice = sorted({c for c in named if named.count(c) > 1})
    if twice:
        yield f"{where}: the claim {twice[0]} is given twice; give each shard's memory once"
    missing = [c for c in expected if c not in named]
    extra = sorted(set(named) - set(expected))
    wrong = [f"missing {missing}"] * bool(missing) + [f"not a shard's {extra}"] * bool(extra)
    if wrong:
        yield (
            f"{where}: the page must mount every shard's memory claim, {expected}, one "
            f"`--memory` each (spec.replicas of {ident(sts)}); {', '.join(wrong)} "
            "(docs/operations.md, One page for the fleet)"
        )


def check_fleet_page(sts: Doc, pages: list[Doc]) -> Iterator[str]:
    """One page over every shard: a locked-down Deployment, its claims those of the replicas."""
    if len(pages) != 1:
        yield f"the fleet renders {len(pages)} Deployments; its one review page is exactly one"
        return
    page = pages[0]
    for container in dig(sts, "spec.template.spec.containers") or []:
        if _argv(container)[:2] == REVIEW:
            yield f"{ident(sts)}: with one page for the fleet, a replica's pod holds no review page"
    yield from check_pod_spec(page, PAGE_POD)
    if dig(page, "spec.strategy.type") != "Recreate":
        yield f"{ident(page)}: spec.strategy.type must be Recreate (one page at a time)"
    for container in dig(page, f"{PAGE_POD}.containers") or []:
        where = f"{ident(page)}: container {container.get('name')!r}"
        argv = _argv(container)
        if argv[:2] != REVIEW:
            yield f"{where}: the fleet's page runs `custodian review` only"
            continue
        yield from check_page_container(where, container)
        yield from check_page_shards(sts, page, container)


def check_page_container(where: str, container: Doc) -> Iterator[str]:
    """Loopback, locked down, /tmp writable, the seal key required, no model key."""
    argv = _argv(container)
    if "--host" not in argv[:-1] or argv[argv.index("--host") + 1] != "127.0.0.1":
        yield f"{where}: --host 127.0.0.1: reach the page with kubectl port-forward"
    yield from check_locked_down(where, container)
    if "/tmp" not in {m.get("mountPath") for m in container.get("volumeMounts") or []}:
        yield f"{where}: /tmp needs a writable volume (HOME=/tmp, read-only root filesystem)"
    env = {str(e.get("name")): e for e in container.get("env") or []}
    key = dig(env.get("CUSTODIAN_SEAL_KEY"), "valueFrom.secretKeyRef") or {}
    if not key or key.get("optional"):
        yield f"{where}: CUSTODIAN_SEAL_KEY must come from the Secret, not optional"
    for name in env:
        if name.endswith("_API_KEY") or name == "CLAUDE_CODE_OAUTH_TOKEN":
            yield f"{where}: {name}: the review page calls no model; leave keys out"
