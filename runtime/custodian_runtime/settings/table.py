"""Every setting a person gives Custodian: its variable, its flag, its default and what it does.

The one list. The loader takes its numeric defaults from here (`number`), the run's caps and
budgets take theirs from `core.limits.Limits`, docs/settings.md is generated from it
(scripts/gen_reference.py), and a test fails when the code names a `CUSTODIAN_*` or `STATE_HUB_*`
variable that is not here. Pure data: nothing is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from custodian_runtime.core.limits import DEFAULT as LIMITS


@dataclass(frozen=True)
class Setting:
    """One setting: `default` is the number the loader uses, else `shown` says what unset means."""

    variable: str
    meaning: str
    default: int | float | None = None
    shown: str = "none"
    flag: str | None = None
    group: str = "general"

    @property
    def default_text(self) -> str:
        """The default as a person reads it."""
        if self.default is None:
            return self.shown
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)


def _limit(field: str, meaning: str) -> Setting:
    return Setting(
        f"CUSTODIAN_{field.upper()}", meaning, default=getattr(LIMITS, field), group="limits"
    )


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "CUSTODIAN_DOMAIN", "the domain to look after", shown="required for `run`", flag="--domain"
    ),
    Setting(
        "STATE_HUB_URL",
        "the state-hub: an http(s) URL, a tracker's (`roundup+http(s)://`, `redmine+http(s)://`, "
        "docs/trackers.md), or `embedded` for the reference hub in-process",
        shown="none (`embedded` with `--embedded-defaults`)",
        flag="--hub",
        group="hub",
    ),
    Setting("STATE_HUB_TOKEN", "sent to the hub as `Authorization: Bearer …`", group="hub"),
    Setting(
        "STATE_HUB_PROXY",
        "an `http(s)://host:port` proxy, the only one the hub's requests (and token) go through; "
        "the hub client ignores `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `.netrc`",
        group="hub",
    ),
    Setting(
        "STATE_HUB_TIMEOUT_S", "seconds a hub read may wait for bytes", default=10.0, group="hub"
    ),
    Setting(
        "STATE_HUB_MAX_ATTEMPTS",
        "attempts of one hub call (transport errors, 429 and 5xx are retried)",
        default=5,
        group="hub",
    ),
    Setting(
        "STATE_HUB_MAX_TOTAL_S",
        "seconds one hub call may take in all, retries and body reads included",
        default=60.0,
        group="hub",
    ),
    Setting(
        "STATE_HUB_MAX_BYTES",
        "the largest hub answer read (32 MiB); a larger one stops the run, exit 3",
        default=32 << 20,
        group="hub",
    ),
    Setting(
        "CUSTODIAN_EMBEDDED_DIR",
        "where the embedded reference hub keeps its database",
        shown="`.custodian`",
        group="hub",
    ),
    Setting(
        "CUSTODIAN_LLM",
        "the model spec (`anthropic`, `openai`, `claude-code`, `offline`, `file:PATH`, …)",
        shown="none (`claude-code` or `offline` with `--embedded-defaults`)",
        flag="--llm",
        group="model",
    ),
    Setting(
        "CUSTODIAN_MODEL",
        "the model name",
        shown="the provider's default",
        flag="--model",
        group="model",
    ),
    Setting(
        "CUSTODIAN_MAX_OUTPUT_TOKENS",
        "the model's answer, at most (2048 in the compact form)",
        default=8192,
        flag="--max-output-tokens",
        group="model",
    ),
    Setting(
        "CUSTODIAN_PROMPT_FORM",
        "`compact` for a small context window (an 8000-token budget and a 2048-token answer "
        "unless set)",
        shown="full",
        group="model",
    ),
    Setting(
        "CUSTODIAN_TEMPERATURE",
        "the model's sampling temperature (`none` sends none)",
        shown="0",
        flag="--temperature",
        group="model",
    ),
    Setting(
        "CUSTODIAN_STRUCTURED_OUTPUT",
        "ask for the plan's JSON schema where the provider can",
        shown="on",
        flag="--structured-output",
        group="model",
    ),
    Setting(
        "CUSTODIAN_LLM_BASE_URL",
        "the provider's endpoint",
        shown="the provider's own",
        group="model",
    ),
    Setting(
        "CUSTODIAN_LLM_TIMEOUT_S",
        "seconds one model attempt may take, answer included",
        shown="the adapter's own: 300 hosted, 1800 for openai-compatible and ollama",
        group="model",
    ),
    Setting("CUSTODIAN_LLM_MAX_ATTEMPTS", "attempts of one model call", default=4, group="model"),
    Setting(
        "CUSTODIAN_LLM_MAX_TOTAL_S",
        "seconds one model call may take in all, retries included",
        shown="the adapter's own: 600 hosted, 3600 for openai-compatible and ollama",
        group="model",
    ),
    Setting(
        "CUSTODIAN_LLM_MAX_RETRY_WAIT_S",
        "the longest `Retry-After` a model call waits before retrying",
        default=60.0,
        group="model",
    ),
    Setting(
        "CUSTODIAN_LLM_MAX_BYTES",
        "the largest model answer (8 MiB; HTTP body or a child's stdout); a larger one stops the "
        "run, exit 4",
        default=8 << 20,
        group="model",
    ),
    Setting(
        "CUSTODIAN_CMD_ENV",
        "extra variable names (`NAME,NAME`) passed to `cmd:` and `claude-code` children",
        group="model",
    ),
    Setting(
        "CUSTODIAN_CLAUDE_BIN",
        "the `claude` executable for `claude-code`",
        shown="`claude` on `PATH`",
        group="model",
    ),
    Setting(
        "CUSTODIAN_CLAUDE_HOME",
        "a home containing the Claude Code CLI's login, in place of the child's private `HOME`",
        group="model",
    ),
    Setting(
        "CUSTODIAN_MEMORY_DIR",
        "the journal, the approval queue and the notes",
        shown="`memory`",
        flag="--memory",
        group="files",
    ),
    Setting(
        "CUSTODIAN_CANON_DIR",
        "the constitution, the domains' guidance and any other canon files (docs/canon.md)",
        shown="`./canon` if it exists, else the packaged canon (read-only)",
        flag="--canon",
        group="files",
    ),
    Setting(
        "CUSTODIAN_CANON_READONLY",
        "`1`: the canon is read-only, and `write_canon` is neither offered, queued nor approved",
        shown="unset",
        group="files",
    ),
    Setting(
        "CUSTODIAN_SEAL_KEY",
        "at least 32 characters; seals the journal and the queue (set but empty: exit 2)",
        shown="none (unsealed)",
        group="files",
    ),
    Setting(
        "CUSTODIAN_SEAL_KEY_PREVIOUS",
        "only while rotating the seal key: the old key, which still verifies what it sealed",
        group="files",
    ),
    Setting(
        "CUSTODIAN_LOG_FORMAT",
        "`json` makes every stderr line one JSON record",
        shown="`text`",
        group="output",
    ),
    Setting(
        "CUSTODIAN_DEBUG",
        "`1` also prints an unexpected error's traceback on stderr",
        shown="unset",
        group="output",
    ),
    Setting(
        "CUSTODIAN_PUSHGATEWAY_URL",
        "an http(s) URL: each run (not a dry run) pushes its metrics there",
        group="output",
    ),
    Setting(
        "CUSTODIAN_DECIDER",
        "the name the CLI decides under (`approvals approve`/`reject`, `policy`, `grants`, "
        "`journal settle`) unless a typed `--by` may decide",
        shown="the OS user",
        group="people",
    ),
    Setting(
        "CUSTODIAN_TYPED_NAMES",
        "`1`: a typed name may decide (`--by NAME` on the CLI, the name field on the review "
        "page; the journal says `by_source: typed`). Unset or `0`: `--by` is refused unless it "
        "is the name the command decides as anyway, and the page decides as the person its "
        "proxy or token names, else as the OS user who runs `custodian review`",
        shown="`0` (typed names do not decide)",
        group="people",
    ),
    Setting(
        "CUSTODIAN_REVIEW_USER_HEADER",
        "the header a trusted proxy names the signed-in person in (e.g. `X-Forwarded-Email`, "
        "as oauth2-proxy sets it); set, the review page decides as that person only",
        group="people",
    ),
    Setting(
        "CUSTODIAN_REVIEW_TRUSTED_PROXIES",
        "addresses or networks (comma-separated) the user header is believed from; required "
        "with it",
        group="people",
    ),
    Setting(
        "CUSTODIAN_REVIEW_TOKENS_FILE",
        "a file of `TOKEN NAME` lines: each person opens the review page with their own token "
        "and decides under their name (the printed start token then opens nothing)",
        group="people",
    ),
    Setting(
        "CUSTODIAN_REVIEW_URL",
        "the review page's address as people open it (e.g. `https://review.example.org`): its "
        "host passes the page's Host check, and notices of waiting items link to it",
        group="people",
    ),
    Setting(
        "CUSTODIAN_NOTIFY_URL",
        'an incoming webhook (Slack or Teams, JSON `{"text": …}`) a run tells when the items '
        "waiting in its domain change, and once when none wait; with a link to the review page "
        "when `CUSTODIAN_REVIEW_URL` is set",
        group="people",
    ),
    _limit("max_events", "progress events one run may add"),
    _limit("max_status_updates", "task status changes one run may make"),
    _limit("max_flags", "flags one run may raise"),
    _limit("max_queued", "items one run may queue for a person"),
    _limit(
        "max_plan_items", "items one plan may contain; a plan with more is rejected whole, exit 4"
    ),
    _limit("token_budget", "estimated prompt tokens (an estimate that errs high)"),
    _limit(
        "canon_share_percent",
        "percent of the token budget that sections retrieved from the canon may take (at most 90)",
    ),
    _limit("stale_after_days", "days after which an in-progress task is stale"),
    _limit("skip_window_hours", "a run on an unchanged domain within this window is skipped"),
    _limit("approval_ttl_days", "days after which a queued item expires"),
    _limit("max_pending", "pending approvals one domain's queue may contain at once"),
    _limit("budget_window_hours", "the rolling window of the budgets below (at most 720)"),
    _limit("budget_events", "progress events per domain in the window, across runs"),
    _limit("budget_status_updates", "status changes per domain in the window, across runs"),
    _limit("budget_flags", "flags per domain in the window, across runs"),
    _limit("budget_status_per_task", "status changes per task in the window, across runs"),
    _limit("defer_days", "days a person's change holds Custodian's writes back (at most 30)"),
)

GROUPS = {
    "general": "What to look after",
    "hub": "The state-hub",
    "model": "The model",
    "files": "Files and seals",
    "output": "Output",
    "people": "Who decides",
    "limits": "Caps and budgets",
}

_BY_VARIABLE = {setting.variable: setting for setting in SETTINGS}


def number(variable: str) -> int | float:
    """The default of a numeric setting; a name with no number is a bug (KeyError, TypeError)."""
    default = _BY_VARIABLE[variable].default
    if default is None:
        raise TypeError(f"{variable} has no numeric default")
    return default
