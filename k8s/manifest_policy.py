"""Project rules for the rendered manifests that a JSON schema cannot express."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cron_period import CronError, shortest_period_s

Doc = dict[str, Any]

COMMAND = ["custodian", "run", "--json"]
UID = 10001
MEMORY_DIR = "/var/lib/custodian/memory"
MIN_GRACE_S = 60  # above the default 30 s: a hub write may take a 60 s retry budget to settle
FAIL_AT_ONCE = {2}  # config error
IGNORED = {75}  # another run holds the lock: no failure, a new pod after the back-off
MUST_COUNT = {3}  # hub unobservable: the one retry may succeed
DOMAIN_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
REQUIRED_ENV = (
    "CUSTODIAN_DOMAIN",
    "STATE_HUB_URL",
    "STATE_HUB_TOKEN",
    "CUSTODIAN_LLM",
    "CUSTODIAN_MODEL",
    "CUSTODIAN_MEMORY_DIR",
    "CUSTODIAN_CANON_DIR",
    "CUSTODIAN_LOG_FORMAT",
    "CUSTODIAN_SEAL_KEY",
    "HOME",
)
# Never optional: a missing key in the Secret would start every run unsealed, silently.
REQUIRED_SECRETS = ("STATE_HUB_TOKEN", "CUSTODIAN_SEAL_KEY")
FIXED_ENV = {"HOME": "/tmp", "CUSTODIAN_MEMORY_DIR": MEMORY_DIR, "CUSTODIAN_LOG_FORMAT": "json"}
SECRET_ENV_RE = re.compile(r"(_API_KEY|_SEAL_KEY|_TOKEN|_SECRET|_PASSWORD)$")


def dig(obj: Any, path: str) -> Any:
    """`dig(doc, "spec.jobTemplate.spec")`, or None where a key is missing."""
    for key in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def ident(doc: Doc) -> str:
    """`CronJob/custodian-website`."""
    return f"{doc.get('kind')}/{dig(doc, 'metadata.name')}"


def _expect(doc: Doc, path: str, wanted: Any) -> Iterator[str]:
    actual = dig(doc, path)
    if actual != wanted:
        yield f"{ident(doc)}: {path} is {actual!r}; must be {wanted!r}"


def _require(doc: Doc, path: str) -> Iterator[str]:
    if dig(doc, path) is None:
        yield f"{ident(doc)}: {path} is not set"


def check_cronjob_spec(cj: Doc) -> Iterator[str]:
    """Schedule-level fields: one run at a time, missed ticks skipped, bounded history."""
    yield from _expect(cj, "spec.concurrencyPolicy", "Forbid")
    for path in ("spec.timeZone", "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"):
        yield from _require(cj, path)
    deadline = dig(cj, "spec.startingDeadlineSeconds")
    if not isinstance(deadline, int) or deadline < 10:
        yield f"{ident(cj)}: spec.startingDeadlineSeconds is {deadline!r}; set it to 10 or more"
    yield from _check_period(cj)


def _check_period(cj: Doc) -> Iterator[str]:
    schedule = str(dig(cj, "spec.schedule"))
    if "TZ=" in schedule:
        yield f"{ident(cj)}: spec.schedule {schedule!r} sets a zone; use spec.timeZone"
        return
    try:
        period = shortest_period_s(schedule)
    except CronError as exc:
        yield f"{ident(cj)}: spec.schedule {schedule!r}: {exc}"
        return
    active = dig(cj, "spec.jobTemplate.spec.activeDeadlineSeconds")
    if period is not None and isinstance(active, int) and active >= period:
        yield (
            f"{ident(cj)}: spec.jobTemplate.spec.activeDeadlineSeconds is {active}; it must be "
            f"below the schedule's shortest period ({period} s for {schedule!r})"
        )


def check_job_spec(cj: Doc) -> Iterator[str]:
    """Job-level fields: at most one retry, a deadline, cleanup, and no retry where none helps."""
    job = "spec.jobTemplate.spec"
    backoff = dig(cj, f"{job}.backoffLimit")
    if not isinstance(backoff, int) or backoff > 1:
        yield f"{ident(cj)}: {job}.backoffLimit is {backoff!r}; must be 0 or 1 (default is 6)"
    for field in ("activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        yield from _require(cj, f"{job}.{field}")
    fail_codes = exit_codes(cj, "FailJob")
    where = f"{ident(cj)}: {job}.podFailurePolicy"
    if missing := FAIL_AT_ONCE - fail_codes:
        yield f"{where} has no FailJob rule for exit codes {sorted(missing)}"
    if wrong := MUST_COUNT & fail_codes:
        yield f"{where} fails the Job on exit codes {sorted(wrong)}; a retry can help there"
    if missing := IGNORED - exit_codes(cj, "Ignore"):
        yield (
            f"{where} has no Ignore rule for exit codes {sorted(missing)}: another run holds "
            "the lock, which is no failure and must not page"
        )


def exit_codes(cj: Doc, action: str) -> set[int]:
    """The exit codes a podFailurePolicy rule with `action` matches (operator In)."""
    found: set[int] = set()
    for rule in dig(cj, "spec.jobTemplate.spec.podFailurePolicy.rules") or []:
        codes = dig(rule, "onExitCodes")
        if rule.get("action") == action and codes and codes.get("operator") == "In":
            found |= set(codes.get("values", []))
    return found


def check_pod_spec(
    cj: Doc, pod: str = "spec.jobTemplate.spec.template.spec", containers_max: int = 1
) -> Iterator[str]:
    """Pod-level fields: no restarts in place, no API token, non-root, a generous grace period;
    at most `containers_max` containers (one, but the fleet's with its review page)."""
    if pod.startswith("spec.jobTemplate"):
        yield from _expect(cj, f"{pod}.restartPolicy", "Never")
    yield from _expect(cj, f"{pod}.automountServiceAccountToken", False)
    yield from _expect(cj, f"{pod}.securityContext.runAsNonRoot", True)
    yield from _expect(cj, f"{pod}.securityContext.runAsUser", UID)
    yield from _expect(cj, f"{pod}.securityContext.fsGroup", UID)
    yield from _expect(cj, f"{pod}.securityContext.seccompProfile.type", "RuntimeDefault")
    grace = dig(cj, f"{pod}.terminationGracePeriodSeconds")
    if not isinstance(grace, int) or grace < MIN_GRACE_S:
        yield f"{ident(cj)}: {pod}.terminationGracePeriodSeconds is {grace!r}; use {MIN_GRACE_S}+"
    containers = dig(cj, f"{pod}.containers") or []
    if not 1 <= len(containers) <= containers_max:
        many = "exactly one container" if containers_max == 1 else f"1 to {containers_max}"
        yield f"{ident(cj)}: {pod}.containers must hold {many}"


def check_container(cj: Doc, container: Doc) -> Iterator[str]:
    """The container: exact command, pinned image, locked-down securityContext, resource bounds."""
    where = f"{ident(cj)}: container {container.get('name')!r}"
    command = (container.get("command") or []) + (container.get("args") or [])
    if command != COMMAND:
        yield f"{where}: command+args is {command!r}; must be {COMMAND!r}"
    yield from check_locked_down(where, container)


def check_locked_down(where: str, container: Doc) -> Iterator[str]:
    """Pinned image, no privilege, read-only root, dropped capabilities, resource bounds."""
    image = str(container.get("image", ""))
    if "@" not in image and (":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")):
        yield f"{where}: image {image!r} must be pinned to a tag other than latest, or a digest"
    wanted = {
        "securityContext.allowPrivilegeEscalation": False,
        "securityContext.readOnlyRootFilesystem": True,
        "securityContext.capabilities.drop": ["ALL"],
    }
    for path, value in wanted.items():
        if dig(container, path) != value:
            yield f"{where}: {path} is {dig(container, path)!r}; must be {value!r}"
    for path in ("resources.requests.cpu", "resources.requests.memory", "resources.limits.memory"):
        if dig(container, path) is None:
            yield f"{where}: {path} is not set"


def _configmap_value(ref: Doc, docs: list[Doc]) -> str | None:
    for doc in docs:
        if doc.get("kind") == "ConfigMap" and dig(doc, "metadata.name") == ref.get("name"):
            value = dig(doc, "data") or {}
            return str(value.get(ref.get("key"))) if ref.get("key") in value else None
    return None


def env_value(entry: Doc, docs: list[Doc]) -> str | None:
    if "value" in entry:
        return str(entry["value"])
    ref = dig(entry, "valueFrom.configMapKeyRef")
    return _configmap_value(ref, docs) if ref else None


def check_env(cj: Doc, container: Doc, docs: list[Doc], domain: str) -> Iterator[str]:
    """Every setting the runtime needs is present; the domain matches; keys come from a Secret."""
    where = f"{ident(cj)}: container {container.get('name')!r} env"
    env = {e.get("name"): e for e in container.get("env") or []}
    for name in REQUIRED_ENV:
        if name not in env:
            yield f"{where}: {name} is not set"
    for name, wanted in {**FIXED_ENV, "CUSTODIAN_DOMAIN": domain}.items():
        if name in env and (actual := env_value(env[name], docs)) != wanted:
            yield f"{where}: {name} resolves to {actual!r}; must be {wanted!r}"
    for name, entry in env.items():
        if SECRET_ENV_RE.search(str(name)) and dig(entry, "valueFrom.secretKeyRef") is None:
            yield f"{where}: {name} must come from a Secret (valueFrom.secretKeyRef)"
        ref = dig(entry, "valueFrom.configMapKeyRef")
        if ref and not ref.get("optional") and _configmap_value(ref, docs) is None:
            yield f"{where}: {name} refers to {ref.get('name')}/{ref.get('key')}, not rendered"
    yield from check_mounts(where, container)


def check_mounts(where: str, container: Doc) -> Iterator[str]:
    """A writable /tmp (read-only root) and the memory volume at its path."""
    mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
    if "/tmp" not in mounts:
        yield f"{where}: /tmp needs a writable volume (HOME=/tmp, read-only root filesystem)"
    if MEMORY_DIR not in mounts:
        yield f"{where}: {MEMORY_DIR} needs the memory PVC mounted"


def check_required_secrets(cj: Doc, container: Doc) -> Iterator[str]:
    """The hub token and the seal key come from a Secret key that must exist (not optional)."""
    where = f"{ident(cj)}: container {container.get('name')!r} env"
    env = {e.get("name"): e for e in container.get("env") or []}
    for name in REQUIRED_SECRETS:
        ref = dig(env.get(name), "valueFrom.secretKeyRef")
        if name in env and ref is not None and ref.get("optional"):
            yield (
                f"{where}: {name} is optional in its secretKeyRef; remove `optional: true` so a "
                "Secret without it stops the pod instead of running without it"
            )


def domain_of(cj: Doc, overlay_domain: str | None) -> str:
    """The overlay's directory name, or else the CronJob name after `custodian-`."""
    if overlay_domain:
        return overlay_domain
    return str(dig(cj, "metadata.name")).removeprefix("custodian-")


def check_render(docs: list[Doc], overlay_domain: str | None) -> list[str]:
    """All project rules over one rendered kustomization."""
    problems = [
        f"{ident(d)}: a Secret must not be rendered; create it out of band"
        for d in docs
        if d.get("kind") == "Secret"
    ]
    cronjobs = [d for d in docs if d.get("kind") == "CronJob" and not is_prune(d)]
    if not cronjobs:
        problems.append("no CronJob rendered")
    for cj in cronjobs:
        domain = domain_of(cj, overlay_domain)
        if not DOMAIN_RE.match(domain):
            problems.append(f"{ident(cj)}: domain {domain!r} is not a valid domain name")
        for check in (check_cronjob_spec, check_job_spec, check_pod_spec):
            problems.extend(check(cj))
        for container in dig(cj, "spec.jobTemplate.spec.template.spec.containers") or []:
            problems.extend(check_container(cj, container))
            problems.extend(check_env(cj, container, docs, domain))
            problems.extend(check_required_secrets(cj, container))
    problems.extend(check_companions(docs, [d for d in docs if d.get("kind") == "CronJob"]))
    return problems


def is_prune(cj: Doc) -> bool:
    """A CronJob whose container runs `custodian journal prune` (workload_policy checks it)."""
    containers = dig(cj, "spec.jobTemplate.spec.template.spec.containers") or [{}]
    return bool((containers[0].get("command") or [])[1:3] == ["journal", "prune"])


def check_companions(docs: list[Doc], cronjobs: list[Doc]) -> Iterator[str]:
    """ServiceAccounts, PVCs and NetworkPolicies that the CronJobs rely on."""
    for doc in docs:
        if doc.get("kind") == "ServiceAccount":
            yield from _expect(doc, "automountServiceAccountToken", False)
        if doc.get("kind") == "PersistentVolumeClaim":
            yield from _expect(doc, "spec.accessModes", ["ReadWriteOnce"])
    names = {(d.get("kind"), dig(d, "metadata.name")) for d in docs}
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    pod = "spec.jobTemplate.spec.template"
    for cj in cronjobs:
        for volume in dig(cj, f"{pod}.spec.volumes") or []:
            claim = dig(volume, "persistentVolumeClaim.claimName")
            if claim and ("PersistentVolumeClaim", claim) not in names:
                yield f"{ident(cj)}: volume {volume.get('name')!r} claims {claim!r}, not rendered"
        labels = dig(cj, f"{pod}.metadata.labels") or {}
        if not any(_selects_for_egress(p, labels) for p in policies):
            yield f"{ident(cj)}: no NetworkPolicy with policyTypes Egress selects its pods"


def _selects_for_egress(policy: Doc, labels: dict[str, str]) -> bool:
    wanted = dig(policy, "spec.podSelector.matchLabels") or {}
    types = dig(policy, "spec.policyTypes") or []
    return "Egress" in types and all(labels.get(k) == v for k, v in wanted.items())
