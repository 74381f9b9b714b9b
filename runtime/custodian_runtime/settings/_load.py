"""The one place that reads the environment, `.env` and flags.

Precedence: command-line flags, then the process environment, then `.env` in the working
directory, then defaults. Every mistake is a ConfigError that names the setting to fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import custodian_runtime.settings.model_options as model_options
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.redact import redact
from custodian_runtime.core.trackers.address import hub_address, known_schemes
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm import EXTRA_VAR, extra_names
from custodian_runtime.llm.base import ModelConfig
from custodian_runtime.llm.registry import split_spec
from custodian_runtime.llm.specs import SPEC_CHOICES
from custodian_runtime.packaged import default_canon, local_or_packaged
from custodian_runtime.settings.dotenv import early_log_format as early_log_format
from custodian_runtime.settings.dotenv import layered_environment
from custodian_runtime.settings.numbers import env_float, env_int, limits_from
from custodian_runtime.settings.people import (
    People,
    notify_url_from,
    people_from,
    review_url_from,
)
from custodian_runtime.settings.seal_keys import SEAL_VARIABLES, seal_key_from
from custodian_runtime.settings.table import number

if TYPE_CHECKING:
    import httpx

    from custodian_runtime.core.journal.seals import SealKey

EMBEDDED = "embedded"
HUB_PROXY = "STATE_HUB_PROXY"
DEFAULT_EMBEDDED_DIR = ".custodian"
# Opens the in-process hub on a database file (dating new demo data by the clock): its transport.
EmbeddedHub = Callable[
    [Path, Callable[[], datetime]], AbstractContextManager["httpx.BaseTransport"]
]


@dataclass(frozen=True)
class HubSettings:
    """How to reach the state-hub: a URL, or `embedded` (the reference hub in-process)."""

    url: str
    token: str | None = None
    timeout_s: float = float(number("STATE_HUB_TIMEOUT_S"))
    max_attempts: int = int(number("STATE_HUB_MAX_ATTEMPTS"))
    max_total_s: float = float(number("STATE_HUB_MAX_TOTAL_S"))
    max_bytes: int = int(number("STATE_HUB_MAX_BYTES"))
    source: str = "flag"
    # The hub's own proxy (STATE_HUB_PROXY); HTTP(S)_PROXY never carries the hub's token.
    proxy: str | None = None
    # For `embedded`: the reference hub, wired in where the program is composed (cli/hub.py).
    open_embedded: EmbeddedHub | None = field(default=None, repr=False, compare=False)

    @property
    def embedded(self) -> bool:
        """True when the run starts the reference hub itself."""
        return self.url == EMBEDDED


@dataclass(frozen=True)
class Settings:
    """Everything a command needs, resolved once."""

    domain: str | None
    hub: HubSettings | None
    model: ModelConfig
    model_source: str
    memory_dir: Path
    canon_dir: Path
    embedded_dir: Path
    # "flag" or the variable that named it, "default" (./canon) or "packaged" (read-only).
    canon_source: str = "flag"
    canon_readonly: bool = False  # CUSTODIAN_CANON_READONLY=1: no canon write is offered
    limits: Limits = field(default_factory=Limits)
    dry_run: bool = False
    show_prompt: bool = False
    force: bool = False
    json_output: bool = False
    log_format: str = "text"
    pushgateway_url: str | None = None  # CUSTODIAN_PUSHGATEWAY_URL: push each run's metrics
    prompt_form: str = "full"  # CUSTODIAN_PROMPT_FORM: `compact` for a small context window
    people: People = field(default_factory=People)  # who decides, and how the name is known
    review_url: str | None = None  # CUSTODIAN_REVIEW_URL: the page as people open it
    # `custodian review --memory A --memory B`: a fleet's shards on one page (review/shards.py);
    # empty for one memory directory. memory_dir is then the first of them.
    shard_memory: tuple[Path, ...] = ()
    # CUSTODIAN_NOTIFY_URL: the webhook told when items wait; never journaled or printed whole.
    notify_url: str | None = field(default=None, repr=False)
    # Never journaled, printed or handed to a model: see `digest_view` and `seal_key_from`.
    seal_key: SealKey | None = field(default=None, repr=False, compare=False)

    def digest_view(self) -> dict[str, Any]:
        """The settings as journaled: no secrets, no environment snapshot."""
        return {
            "domain": self.domain,
            "hub": None if self.hub is None else redact(self.hub.url),
            "llm": self.model.spec,
            "model": self.model.model,
            "max_output_tokens": self.model.max_output_tokens,
            "temperature": self.model.temperature,
            "structured_output": self.model.structured,
            "limits": self.limits.__dict__,
            "dry_run": self.dry_run,
            "force": self.force,
        }


def _shards(given: object, cwd: Path) -> tuple[Path, ...]:
    """The shards' memory directories of a fleet's review page, each once (none: one memory)."""
    if not isinstance(given, list | tuple) or len(given) < 2:
        return ()
    found = tuple((cwd / str(d)).resolve() for d in given)
    twice = sorted({str(d) for d in found if found.count(d) > 1})
    if twice:
        raise ConfigError(
            f"--memory {twice[0]} is given twice: give each shard's memory directory once",
            setting="--memory",
        )
    return found


def pick(flag: object, env: Mapping[str, str], name: str) -> tuple[str | None, str]:
    """The flag's value if given, else the variable's; with where it came from."""
    if flag not in (None, ""):
        return str(flag), "flag"
    if env.get(name):
        return env[name], name
    return None, "default"


def parse_domain(value: str | None, *, required: bool) -> str | None:
    """Validate a domain name against the contract's pattern."""
    if value is None:
        if required:
            raise ConfigError(
                "no domain given: pass --domain D or set CUSTODIAN_DOMAIN", setting="--domain"
            )
        return None
    # The contract's models (pydantic) load only when a domain is checked, not for `--help`.
    from custodian_runtime.core.names import DOMAIN_RULE, is_domain

    if not is_domain(value):
        raise ConfigError(
            f"domain {value!r} is not a valid domain name ({DOMAIN_RULE})", setting="--domain"
        )
    return value


def parse_hub(
    url: str | None, token: str | None, source: str, env: Mapping[str, str]
) -> HubSettings:
    """Validate the hub URL: `embedded`, http(s)://host[:port][/path], or a tracker's
    <backend>+http(s)://... (core/trackers)."""
    if url is None:
        raise ConfigError(
            "no state-hub configured: pass --hub URL (or --hub embedded for the local reference "
            "hub), or set STATE_HUB_URL",
            setting="STATE_HUB_URL",
        )
    if url != EMBEDDED and not re.fullmatch(
        r"([A-Za-z][A-Za-z0-9-]*\+)?https?://[^\s/]+(/\S*)?", url
    ):
        raise ConfigError(
            f"state-hub URL {redact(url)!r} is not an http(s) URL, e.g. http://127.0.0.1:8765 "
            f"(or a tracker's: {known_schemes()})",
            setting="STATE_HUB_URL",
        )
    if url != EMBEDDED:
        try:
            hub_address(url)
        except ValueError as exc:
            raise ConfigError(
                f"state-hub URL {redact(url)!r}: {exc}", setting="STATE_HUB_URL"
            ) from None
    return HubSettings(
        url=url.rstrip("/"),
        token=token,
        timeout_s=env_float(env, "STATE_HUB_TIMEOUT_S"),
        max_attempts=env_int(env, "STATE_HUB_MAX_ATTEMPTS"),
        max_total_s=env_float(env, "STATE_HUB_MAX_TOTAL_S"),
        max_bytes=env_int(env, "STATE_HUB_MAX_BYTES"),
        source=source,
        proxy=hub_proxy(env),
    )


def hub_proxy(env: Mapping[str, str]) -> str | None:
    """STATE_HUB_PROXY, the one proxy the hub's requests (and token) may go through, or None."""
    proxy = env.get(HUB_PROXY, "").strip()
    if not proxy:
        return None
    if not re.fullmatch(r"https?://[^\s/]+/?", proxy):
        raise ConfigError(
            f"{HUB_PROXY}={redact(proxy)!r} is not a proxy URL: give http(s)://host:port, "
            "or leave it unset to reach the hub directly",
            setting=HUB_PROXY,
        )
    return proxy


def model_config(
    spec: str, model: str | None, env: Mapping[str, str], flags: Mapping[str, Any] | None = None
) -> ModelConfig:
    """Build the adapter configuration; the spec is checked against the registry."""
    _, argument = split_spec(spec)
    given = flags or {}
    return ModelConfig(
        spec=spec,
        argument=argument,
        model=model,
        max_output_tokens=model_options.max_output_tokens(given, env),
        temperature=model_options.temperature(given, env),
        structured=model_options.structured(given, env),
        # Unset, the adapter's own: a local server's call on a CPU takes far longer.
        timeout_s=_optional_float(env, "CUSTODIAN_LLM_TIMEOUT_S"),
        base_url=env.get("CUSTODIAN_LLM_BASE_URL"),
        max_attempts=env_int(env, "CUSTODIAN_LLM_MAX_ATTEMPTS"),
        max_total_s=_optional_float(env, "CUSTODIAN_LLM_MAX_TOTAL_S"),
        max_retry_wait_s=env_float(env, "CUSTODIAN_LLM_MAX_RETRY_WAIT_S"),
        max_response_bytes=env_int(env, "CUSTODIAN_LLM_MAX_BYTES"),
        env=dict(env),
        child_env=extra_names(env.get(EXTRA_VAR)),
    )


def _optional_float(env: Mapping[str, str], name: str) -> float | None:
    """A positive number variable, or None: the adapter's default then applies."""
    return env_float(env, name, 1.0) if env.get(name) is not None else None


def claude_on_path(env: Mapping[str, str]) -> str | None:
    """The Claude Code executable the embedded default would use, if any."""
    from custodian_runtime.llm.claude_code import find_claude

    return find_claude(env)


def load_settings(
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    cwd: Path,
    *,
    domain_required: bool = True,
    hub_required: bool = True,
) -> Settings:
    """Resolve every setting a command needs from flags, environment, `.env` and defaults.

    `flags` holds the parsed command-line options by name (missing or None means not given).
    With `embedded_defaults`, an unconfigured hub becomes the in-process reference hub and an
    unconfigured model becomes `claude-code` when a `claude` executable is found, else `offline`.
    """
    env = layered_environment(environ, cwd)
    seal_key = seal_key_from(env, environ)
    for name in SEAL_VARIABLES:  # the model's snapshot of the environment never holds a seal key
        env.pop(name, None)
    embedded_defaults = bool(flags.get("embedded_defaults"))
    domain, _ = pick(flags.get("domain"), env, "CUSTODIAN_DOMAIN")
    hub = _hub(flags, env, embedded=embedded_defaults, required=hub_required)
    spec, model_source = _model_spec(flags, env, embedded=embedded_defaults, required=hub_required)
    model_name, _ = pick(flags.get("model"), env, "CUSTODIAN_MODEL")
    memory, _ = pick(flags.get("memory"), env, "CUSTODIAN_MEMORY_DIR")
    canon_dir, canon_source = _canon(flags, env, cwd)
    return Settings(
        domain=parse_domain(domain, required=domain_required),
        hub=hub,
        model=model_config(spec, model_name, env, flags),
        model_source=model_source,
        memory_dir=(cwd / (memory or "memory")).resolve(),
        shard_memory=_shards(flags.get("shard_memory"), cwd),
        canon_dir=canon_dir,
        embedded_dir=(cwd / env.get("CUSTODIAN_EMBEDDED_DIR", DEFAULT_EMBEDDED_DIR)).resolve(),
        canon_source=canon_source,
        canon_readonly=env.get("CUSTODIAN_CANON_READONLY", "").strip().lower() in ("1", "true"),
        limits=model_options.prompt_limits(limits_from(env), env),
        prompt_form=model_options.prompt_form(env),
        dry_run=bool(flags.get("dry_run")),
        show_prompt=bool(flags.get("show_prompt")),
        force=bool(flags.get("force")),
        json_output=bool(flags.get("json")),
        log_format=_log_format(env),
        pushgateway_url=_pushgateway(env),
        people=people_from(env, cwd),
        review_url=review_url_from(env),
        notify_url=notify_url_from(env),
        seal_key=seal_key,
    )


def _hub(
    flags: Mapping[str, Any], env: Mapping[str, str], *, embedded: bool, required: bool
) -> HubSettings | None:
    """The hub from --hub or STATE_HUB_URL; `embedded` when unset and embedded defaults apply."""
    url, source = pick(flags.get("hub"), env, "STATE_HUB_URL")
    if url is None and embedded:
        url, source = EMBEDDED, "embedded default"
    if url is None and not required:
        return None
    return parse_hub(url, env.get("STATE_HUB_TOKEN"), source, env)


def _canon(flags: Mapping[str, Any], env: Mapping[str, str], cwd: Path) -> tuple[Path, str]:
    """--canon, else CUSTODIAN_CANON_DIR, else ./canon if it exists, else the packaged canon."""
    canon, source = pick(flags.get("canon"), env, "CUSTODIAN_CANON_DIR")
    if canon is not None:
        return (cwd / canon).resolve(), source
    return local_or_packaged(cwd, "canon", default_canon())


def _model_spec(
    flags: Mapping[str, Any], env: Mapping[str, str], *, embedded: bool, required: bool
) -> tuple[str, str]:
    """The model spec and where it came from; a default only with embedded defaults."""
    spec, source = pick(flags.get("llm"), env, "CUSTODIAN_LLM")
    if spec is not None:
        return spec, source
    if not embedded and required:
        raise ConfigError(
            f"no model configured: pass --llm SPEC ({SPEC_CHOICES}) or set CUSTODIAN_LLM",
            setting="CUSTODIAN_LLM",
        )
    return ("claude-code" if claude_on_path(env) else "offline"), "embedded default"


def _log_format(env: Mapping[str, str]) -> str:
    """CUSTODIAN_LOG_FORMAT: `text` (the default) or `json`."""
    log_format = env.get("CUSTODIAN_LOG_FORMAT", "text")
    if log_format not in ("text", "json"):
        raise ConfigError(
            f"CUSTODIAN_LOG_FORMAT={log_format!r}: use 'text' or 'json'",
            setting="CUSTODIAN_LOG_FORMAT",
        )
    return log_format


def _pushgateway(env: Mapping[str, str]) -> str | None:
    """CUSTODIAN_PUSHGATEWAY_URL: unset, or an http(s) URL of a Prometheus Pushgateway."""
    url = env.get("CUSTODIAN_PUSHGATEWAY_URL") or None
    if url is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise ConfigError(
            f"CUSTODIAN_PUSHGATEWAY_URL={redact(url)!r} is not an http(s) URL, "
            "e.g. http://pushgateway:9091",
            setting="CUSTODIAN_PUSHGATEWAY_URL",
        )
    return url.rstrip("/") if url else None
