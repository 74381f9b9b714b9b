"""`custodian`: argparse -> settings -> the command; errors become exit codes.

Building the parser imports argparse and what the help text names, no more: each command's
modules, the revision `--version` prints and what an error needs are imported when used, so
`custodian --help` costs little more than argparse (bench/startup.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, get_args

from custodian_runtime import __version__
from custodian_runtime.cli._people import BY_HELP
from custodian_runtime.cli._run import (
    error_stream,
    parse,
    say,
    stderr_routed,
    stdout_reader_gone,
)
from custodian_runtime.core.approvals.status import ApprovalStatus
from custodian_runtime.errors import ConfigError, CustodianError, Interrupted
from custodian_runtime.llm.specs import SPEC_CHOICES

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any, TypeAlias

    from custodian_runtime.core.approvals.decider import Decider
    from custodian_runtime.settings import Settings

    # What add_subparsers returns (generic only to the type checker).
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    Handler = Callable[[argparse.Namespace], int]
WAIT_HELP = (
    "while a run has the domain's lock, wait up to this long, then record the decision to be "
    "carried out when the run ends (default 10)"
)
SETTLE_BY_HELP = "who settles it, " + BY_HELP.removeprefix("who decides, ")
MEMORY_HELP = "memory directory (env CUSTODIAN_MEMORY_DIR; default memory)"
CANON_HELP = "canon directory (env CUSTODIAN_CANON_DIR; default ./canon, else the packaged one)"


def _path(text: str) -> Path:
    """A path argument (pathlib is imported when a command is given one)."""
    from pathlib import Path

    return Path(text)


_path.__name__ = "Path"  # argparse names the type in an error: as `type=Path` did


class _Version(argparse._VersionAction):
    """`--version`: the revision is read from the package's data only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from custodian_runtime.packaged import revision

        self.version = f"custodian {__version__} (revision {revision()})"
        super().__call__(parser, *args, **kwargs)


def _model_options(p: argparse.ArgumentParser) -> None:
    """How the model is asked: its temperature, output tokens and structured output."""
    p.add_argument("--temperature", metavar="T",
                   help="0 to 2, or 'none' (env CUSTODIAN_TEMPERATURE; default 0)")  # fmt: skip
    p.add_argument("--max-output-tokens", metavar="N",
                   help="the answer's limit (env CUSTODIAN_MAX_OUTPUT_TOKENS; 8192, "
                   "2048 in the compact form)")  # fmt: skip
    p.add_argument("--structured-output", choices=("on", "off"),
                   help="ask for the plan's JSON schema where the provider can "
                   "(env CUSTODIAN_STRUCTURED_OUTPUT; default on)")  # fmt: skip


def _run_parser(sub: Subparsers) -> None:
    p = sub.add_parser("run", help="one observe -> orient -> decide -> act pass for a domain")
    p.add_argument("--domain", help="the domain to look after (env CUSTODIAN_DOMAIN)")
    p.add_argument(
        "--hub",
        help="state-hub URL, a tracker's (roundup+http://...), or 'embedded' (env STATE_HUB_URL)",
    )
    p.add_argument(
        "--llm",
        help=f"model spec: {SPEC_CHOICES} (env CUSTODIAN_LLM)",
    )
    p.add_argument("--model", help="model name for the provider (env CUSTODIAN_MODEL)")
    _model_options(p)
    p.add_argument("--memory", help=MEMORY_HELP)
    p.add_argument("--canon", help=CANON_HELP)
    p.add_argument("--dry-run", action="store_true", help="decide, print, write nothing")
    p.add_argument("--show-prompt", action="store_true", help="print the rendered prompt")
    p.add_argument("--force", action="store_true", help="run even if nothing changed")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON on stdout")
    p.add_argument(
        "--embedded-defaults",
        action="store_true",
        help="with nothing configured, use the embedded hub and claude-code or offline",
    )
    p.set_defaults(handler=_cmd_run)


def _watch_parser(sub: Subparsers) -> None:
    p = sub.add_parser("watch", help="one long-running loop that runs many domains as they move")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--domains", help="the domains to look after, comma-separated")
    which.add_argument("--domains-file", metavar="PATH",
                       help="the domains to look after, one a line (any number)")  # fmt: skip
    which.add_argument("--all-domains", action="store_true", help="every domain the hub lists")
    p.add_argument("--shard", metavar="I/N", help="only the domains in shard I of N (sha256)")
    p.add_argument("--every", type=float, default=60.0, metavar="SECONDS",
                   help="read the hub's overview this often (default 60)")  # fmt: skip
    p.add_argument("--parallel", type=int, default=4, metavar="K",
                   help="at most K runs (model calls) at once (default 4)")  # fmt: skip
    p.add_argument("--once", action="store_true", help="one pass; wait for its runs; exit")
    p.add_argument("--prune-keep", metavar="AGE",
                   help="prune each domain once a day, keeping AGE (e.g. 90d)")  # fmt: skip
    p.add_argument("--metrics-port", type=int, metavar="PORT", help="serve /metrics, /healthz")
    p.add_argument("--metrics-host", default="127.0.0.1", help="(default 127.0.0.1)")
    p.add_argument(
        "--hub",
        help="state-hub URL, a tracker's (roundup+http://...), or 'embedded' (env STATE_HUB_URL)",
    )
    p.add_argument("--llm", help=f"model spec: {SPEC_CHOICES} (env CUSTODIAN_LLM)")
    p.add_argument("--model", help="model name for the provider (env CUSTODIAN_MODEL)")
    p.add_argument("--memory", help=MEMORY_HELP)
    p.add_argument("--canon", help=CANON_HELP)
    p.set_defaults(handler=_cmd_watch)


def _hub_parser(sub: Subparsers) -> None:
    p = sub.add_parser("hub", help="the reference state-hub")
    hub_sub = p.add_subparsers(dest="hub_command", required=True)
    serve = hub_sub.add_parser("serve", help="serve the reference hub over HTTP")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--db", type=_path, default=".custodian/hub.sqlite3")
    serve.add_argument("--seed", help="'demo' or a JSON file, loaded into an empty database")
    serve.add_argument("--token", help="require 'Authorization: Bearer TOKEN' on every request")
    serve.set_defaults(handler=_cmd_hub_serve)


def _spine_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("inspect", help="replay the journal read-only and verify every chain")
    p.add_argument("run_id", nargs="?", help="a run id (default: the domain's latest run)")
    p.add_argument("--domain")
    p.add_argument("--memory")
    p.set_defaults(handler=_cmd_inspect)
    r = sub.add_parser("replay", help="re-run extraction and authorization on a stored run")
    r.add_argument("run_id")
    r.add_argument("--memory")
    r.add_argument("--canon")
    r.add_argument("--json", action="store_true")
    r.set_defaults(handler=_cmd_replay)


def _approvals_parser(sub: Subparsers) -> None:
    p = sub.add_parser("approvals", help="the queue of proposals waiting for a person")
    p.add_argument("--memory", help=MEMORY_HELP)
    a = p.add_subparsers(dest="approvals_command", required=True)
    # `--memory` is taken before or after the subcommand; SUPPRESS keeps an absent one from
    # overwriting the value given before it.
    after = argparse.ArgumentParser(add_help=False)
    after.add_argument("--memory", default=argparse.SUPPRESS, help=MEMORY_HELP)
    ls = a.add_parser("list", help="list approval items", parents=[after])
    ls.add_argument("--domain")
    ls.add_argument(
        "--status", choices=get_args(ApprovalStatus), help="only items with this status"
    )
    ls.add_argument("--json", action="store_true")
    show = a.add_parser("show", help="show one item", parents=[after])
    show.add_argument("approval_id")
    show.add_argument("--json", action="store_true", help="the item as stored, as JSON")
    ok = a.add_parser(
        "approve", help="approve and execute an item if its state is unchanged", parents=[after]
    )
    ok.add_argument("approval_id")
    ok.add_argument("--by", help=BY_HELP)
    ok.add_argument("--note", help="a note kept with the decision")
    ok.add_argument(
        "--hub",
        help="state-hub URL, a tracker's (roundup+http://...), or 'embedded' (env STATE_HUB_URL)",
    )
    ok.add_argument("--wait", type=float, default=10.0, metavar="SECONDS", help=WAIT_HELP)
    ok.add_argument(
        "--canon", help="canon directory, for items that write the canon (env CUSTODIAN_CANON_DIR)"
    )
    ok.add_argument("--json", action="store_true", help="what it came to and the item, as JSON")
    no = a.add_parser("reject", help="reject an item; it is never queued again", parents=[after])
    no.add_argument("approval_id")
    no.add_argument("--by", help=BY_HELP)
    no.add_argument("--reason", required=True)
    no.add_argument("--json", action="store_true", help="what it came to and the item, as JSON")
    no.add_argument(
        "--hub",
        help="state-hub URL or 'embedded' (env STATE_HUB_URL); needed only to settle an "
        "earlier approval's write that was interrupted",
    )
    no.add_argument("--canon", help="canon directory (env CUSTODIAN_CANON_DIR)")
    no.add_argument("--wait", type=float, default=10.0, metavar="SECONDS", help=WAIT_HELP)
    fix = a.add_parser(
        "repair", help="rewrite item files that disagree with the journal", parents=[after]
    )
    fix.add_argument("--domain", help="only this domain (default: every domain)")
    p.set_defaults(handler=_cmd_approvals)


def _journal_parser(sub: Subparsers) -> None:
    p = sub.add_parser("journal", help="maintain the journals under memory/journal")
    j = p.add_subparsers(dest="journal_command", required=True)
    prune = j.add_parser("prune", help="drop old segments; the chain left still verifies")
    prune.add_argument("--domain", help="the domain whose journal to prune")
    prune.add_argument("--keep", required=True, help="how much history to keep: 90d, 12w (31d+)")
    prune.add_argument("--memory")
    prune.set_defaults(handler=_cmd_journal_prune)
    reseal = j.add_parser("reseal", help="move what the previous seal key sealed to the new key")
    reseal.add_argument("--domain", help="only this domain (default: every domain)")
    reseal.add_argument("--memory")
    reseal.set_defaults(handler=_cmd_journal_reseal)
    settle = j.add_parser("settle", help="close an open write by hand (its id: see inspect)")
    settle.add_argument("ref", help="the open write's id, <domain>:<seq>, as inspect lists it")
    settle.add_argument("--by", help=SETTLE_BY_HELP)
    settle.add_argument("--reason", required=True, help="why, kept in the journal")
    settle.add_argument("--memory")
    settle.set_defaults(handler=_cmd_journal_settle)


def _status_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "status", help="every domain's last run and check, last success, queue and cost"
    )
    p.add_argument("--memory", help=MEMORY_HELP)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="as JSON")
    out.add_argument("--prometheus", action="store_true", help="Prometheus text format")
    p.add_argument("--max-age", help="exit 8 past this with no success (default 48h; 2d, 1w)")
    p.set_defaults(handler=_cmd_status)


def _review_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "review", help="a local web page to read runs and notes and decide approvals"
    )
    p.add_argument(
        "--memory",
        action="append",
        help=f"{MEMORY_HELP}; repeat it for each shard of a fleet: one page over all of them",
    )
    p.add_argument(
        "--hub",
        help="state-hub URL, a tracker's (roundup+http://...), or 'embedded' (env STATE_HUB_URL)",
    )
    p.add_argument("--canon", help=CANON_HELP)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8750, help="port to bind (default 8750)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.set_defaults(handler=_cmd_review)


def _eval_parser(sub: Subparsers) -> None:
    p = sub.add_parser("eval", help="score a model and a canon on the scenarios, in dry runs")
    p.add_argument("--llm", help="model spec, as for run (env CUSTODIAN_LLM)")
    p.add_argument("--model", help="model name for the provider (env CUSTODIAN_MODEL)")
    _model_options(p)
    p.add_argument("--canon", help=CANON_HELP)
    p.add_argument("--scenarios", type=_path, help="default ./evals/scenarios, else the packaged")
    p.add_argument("--only", nargs="+", default=[], metavar="NAME", help="only these scenarios")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--repeat", type=int, default=1, help="runs per scenario (default 1)")
    p.set_defaults(handler=_cmd_eval)


def _init_parser(sub: Subparsers) -> None:
    p = sub.add_parser("init", help="copy the default canon into DIR, for editing")
    p.add_argument("dir", type=_path, metavar="DIR", help="a new or empty directory")
    p.set_defaults(handler=_cmd_init)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = argparse.ArgumentParser(
        prog="custodian", description="A bounded runtime that looks after a state-hub's domains."
    )
    parser.add_argument("--version", action=_Version, version=f"custodian {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _run_parser(sub)
    _watch_parser(sub)
    _hub_parser(sub)
    _spine_parsers(sub)
    _approvals_parser(sub)
    _journal_parser(sub)
    _status_parser(sub)
    _review_parser(sub)
    _eval_parser(sub)
    _init_parser(sub)
    from custodian_runtime.cli.standing import add_parsers

    add_parsers(sub, _settings)
    return parser


def _settings(args: argparse.Namespace, **kwargs: bool) -> Settings:
    from pathlib import Path

    from custodian_runtime.cli.hub import with_embedded_hub
    from custodian_runtime.settings import load_settings

    return with_embedded_hub(load_settings(vars(args), os.environ, Path.cwd(), **kwargs))


def _cmd_run(args: argparse.Namespace) -> int:
    from custodian_runtime.cli._run import cmd_run

    def load() -> Settings:
        settings = _settings(args)
        _carry_out_recorded(settings)  # decided while the domain was busy: carried out first
        return settings

    return cmd_run(args, load, after=_carry_out_recorded)


def _cmd_watch(args: argparse.Namespace) -> int:
    from custodian_runtime import watch

    if args.every <= 0:
        raise ConfigError(
            f"--every {args.every:g}: give seconds above 0 (e.g. 60)", setting="--every"
        )
    if args.parallel < 1:
        raise ConfigError(f"--parallel {args.parallel}: give 1 or more", setting="--parallel")
    flags = {k: getattr(args, k) for k in ("hub", "llm", "model", "memory", "canon")}
    settings = _settings(argparse.Namespace(**flags), domain_required=False)
    domains = watch.parse_domains(args.domains) if args.domains else None
    if args.domains_file:
        domains = watch.read_domains(_path(args.domains_file))
    request = watch.WatchRequest(
        domains=domains,
        shard=watch.parse_shard(args.shard) if args.shard else None,
        every_s=args.every,
        parallel=args.parallel,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        once=args.once,
        prune_keep=watch.parse_prune_keep(args.prune_keep) if args.prune_keep else None,
    )
    return watch.watch_command(settings, request, _carry_out_recorded)


def _carry_out_recorded(settings: Settings) -> None:
    """Decisions a person made while the domain was busy are carried out once it is free."""
    from custodian_runtime.journal.person.inbox_files import words_waiting

    if settings.dry_run or settings.domain is None:
        return
    if not words_waiting(settings.memory_dir, settings.domain):
        return  # one listing: nothing was decided meanwhile (a skip loads no approvals)
    from custodian_runtime.core.inert import for_terminal
    from custodian_runtime.person import carry_out_recorded_decisions

    for done in carry_out_recorded_decisions(settings, settings.domain):
        sys.stderr.write(for_terminal(f"custodian: kept decision: {done.message}") + "\n")


def _cmd_eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from custodian_runtime.evals import eval_command
    from custodian_runtime.packaged import default_scenarios

    flags = {"llm": args.llm, "model": args.model, "canon": args.canon}
    for name in ("temperature", "max_output_tokens", "structured_output"):
        flags[name] = getattr(args, name)
    settings = _settings(argparse.Namespace(**flags), domain_required=False, hub_required=False)
    if settings.model_source == "embedded default":
        sys.stderr.write(f"custodian: eval: no --llm given; using {settings.model.spec}\n")
    scenarios = args.scenarios or default_scenarios(Path.cwd())
    return eval_command(
        settings, scenarios, args.only, args.repeat, sys.stdout, as_json_output=args.json,
        progress=sys.stderr,
    )  # fmt: skip


def _cmd_init(args: argparse.Namespace) -> int:
    from custodian_runtime.core.inert import for_prose
    from custodian_runtime.packaged import init_canon, init_text

    target = args.dir.resolve()
    sys.stdout.write(for_prose(init_text(target, init_canon(target))) + "\n")
    return 0


def _cmd_hub_serve(args: argparse.Namespace) -> int:
    from custodian_hub import serve_command

    return serve_command(args.host, args.port, args.db, args.seed, args.token)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from custodian_runtime.audit import inspect_command
    from custodian_runtime.writes import check_memory

    settings = _settings(args, domain_required=False, hub_required=False)
    check_memory(settings.memory_dir, writable=False)
    return inspect_command(
        settings.memory_dir, args.run_id, settings.domain, sys.stdout, settings.seal_key
    )


def _cmd_replay(args: argparse.Namespace) -> int:
    from custodian_runtime.audit import replay_command
    from custodian_runtime.writes import check_memory

    settings = _settings(args, domain_required=False, hub_required=False)
    check_memory(settings.memory_dir, writable=False)
    return replay_command(settings, args.run_id, sys.stdout, as_json=args.json)


def _cmd_approvals(args: argparse.Namespace) -> int:
    from custodian_runtime import person
    from custodian_runtime.writes import check_memory

    settings = _settings(args, domain_required=False, hub_required=False)
    command = args.approvals_command
    check_memory(settings.memory_dir, writable=command in ("approve", "reject", "repair"))
    request: person.ApprovalsRequest
    if command == "list":
        request = person.ListRequest(args.domain, args.status, args.json)
    elif command == "show":
        request = person.ShowRequest(args.approval_id, args.json)
    elif command == "reject":
        who = _decider(settings, args.by)
        request = person.RejectRequest(
            args.approval_id, who.name, args.reason, args.wait, args.json, who.source
        )
    elif command == "repair":
        request = person.RepairRequest(args.domain)
    else:
        who = _decider(settings, args.by)
        request = person.ApproveRequest(
            args.approval_id, who.name, args.note, args.wait, args.json, who.source
        )
    return person.approvals_command(settings, request, sys.stdout)


def _decider(settings: Settings, typed: str | None) -> Decider:
    """Who decides on the command line (cli/_people.py)."""
    from custodian_runtime.cli._people import decider

    return decider(settings, typed)


def _cmd_journal_prune(args: argparse.Namespace) -> int:
    from custodian_runtime.clock import utc_now
    from custodian_runtime.core.fold.prune import parse_keep
    from custodian_runtime.core.inert import for_terminal
    from custodian_runtime.journal.prune import prune

    settings = _settings(args, hub_required=False)
    try:
        keep = parse_keep(args.keep)
    except ValueError as exc:
        raise ConfigError(str(exc), setting="--keep") from exc
    domain = settings.domain
    if domain is None:  # load_settings requires a domain here; this keeps the type honest
        raise ConfigError("no domain given: pass --domain D", setting="--domain")
    done = prune(settings.memory_dir, domain, keep, utc_now(), settings.seal_key)
    sys.stdout.write(for_terminal(done.text()) + "\n")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from custodian_runtime.clock import utc_now
    from custodian_runtime.metrics import DEFAULT_MAX_AGE as DEFAULT
    from custodian_runtime.metrics import StatusRequest, parse_max_age, status_command
    from custodian_runtime.writes import check_memory

    settings = _settings(args, domain_required=False, hub_required=False)
    check_memory(settings.memory_dir, writable=False)
    max_age = parse_max_age(args.max_age or DEFAULT)
    request = StatusRequest(max_age, args.json, args.prometheus)
    return status_command(settings.memory_dir, settings.seal_key, request, sys.stdout, utc_now())


def _cmd_journal_reseal(args: argparse.Namespace) -> int:
    from custodian_runtime.journal.reseal import reseal_command
    from custodian_runtime.writes import check_memory

    settings = _settings(args, domain_required=False, hub_required=False)
    check_memory(settings.memory_dir, writable=True)
    return reseal_command(settings.memory_dir, settings.seal_key, settings.domain, sys.stdout)


def _cmd_journal_settle(args: argparse.Namespace) -> int:
    from custodian_runtime.audit import settle_command

    s = _settings(args, domain_required=False, hub_required=False)
    by = _decider(s, args.by).name
    return settle_command(s.memory_dir, args.ref, by, args.reason, sys.stdout, s.seal_key)


def _cmd_review(args: argparse.Namespace) -> int:
    from custodian_runtime.review import review_command
    from custodian_runtime.writes import check_memory

    given = args.memory or []
    # The first memory stands for the page's own (its port's name, its settings); with more
    # than one, the page is a fleet's: every shard's queue on it (review/shards.py).
    args.memory, args.shard_memory = (given[0] if given else None), given
    settings = _settings(args, domain_required=False, hub_required=False)
    for memory in settings.shard_memory or (settings.memory_dir,):
        check_memory(memory, writable=True)
    return review_command(settings, args.host, args.port, args.open)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, run the command, and map errors to exit codes with a message that says the fix."""
    with stderr_routed():
        return _main(build_parser(), argv)


def _main(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parse(parser, argv)
    from custodian_runtime.core.redact import redact

    handler: Handler = args.handler
    try:
        return _flushed(handler(args))
    except ConfigError as exc:
        message = redact(exc.message)
        say(
            "ERROR",
            f"configuration error: {message}",
            phase="config",
            setting=exc.setting,
            exit_code=exc.exit_code,
        )
        return exc.exit_code
    except CustodianError as exc:
        severity = "WARNING" if isinstance(exc, Interrupted) else "ERROR"
        say(severity, redact(exc.message), phase="error", exit_code=exc.exit_code)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:  # `custodian … | head`: the reader has all it wanted
        if stdout_reader_gone():
            return 0
        return _crashed(exc, args)
    except Exception as exc:
        return _crashed(exc, args)


def _flushed(code: int) -> int:
    """The command's exit code once stdout is flushed here, where a closed pipe is caught.

    A closed pipe is exit 0 wherever it shows, so buffered or not (PYTHONUNBUFFERED) the
    answer is the same."""
    sys.stdout.flush()
    return code


def _crashed(exc: BaseException, args: argparse.Namespace) -> int:
    """A bug: no traceback on the terminal, one line saying where it is."""
    from custodian_runtime.process.crash import report_crash

    return report_crash(exc, _memory_dir(args), os.environ, error_stream())


def _memory_dir(args: argparse.Namespace) -> Path:
    """Where the memory directory most likely is, for a crash report (flag, then environment)."""
    from pathlib import Path

    given = getattr(args, "memory", None) or os.environ.get("CUSTODIAN_MEMORY_DIR") or "memory"
    return Path.cwd() / given
