"""`custodian policy` and `custodian grants`: a person's modes, grants and the agreement report.

Each change is a person's decision, journaled in the domain's journal
(journal/person/standing_store.py); what it means is the core's (core/standing/: modes.py,
grants.py, agreement.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from custodian_runtime.cli._people import BY_HELP, decider
from custodian_runtime.errors import ConfigError

if TYPE_CHECKING:
    from typing import TypeAlias

    from custodian_runtime.settings import Settings

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    Loader = Callable[..., Settings]


def add_parsers(sub: Subparsers, load: Loader) -> None:
    """The `policy` and `grants` subcommands; `load` reads the settings as every command does."""
    p = sub.add_parser("policy", help="a domain's modes per operation, set by a person")
    ps = p.add_subparsers(dest="policy_command", required=True)
    show = ps.add_parser("show", help="each operation's mode")
    show.add_argument("--json", action="store_true")
    put = ps.add_parser("set", help="set one operation's mode (narrowing only)")
    put.add_argument(
        "--operation", required=True, help="an operation, or 'all' (e.g. ask: queue everything)"
    )
    put.add_argument(
        "--mode", required=True, help="auto (sanctioned writes only), ask, shadow, off"
    )
    _person(put)
    no = ps.add_parser("no", help="say a standing no of one class (held, not asked), or lift one")
    no.add_argument("--operation", required=True)
    no.add_argument("--status", default="", help="the status its proposals set")
    no.add_argument("--cites", default="", help="what they cite: none, other, newer")
    no.add_argument("--workstream", default="", help="in one workstream")
    no.add_argument("--owner", default="", help="or across the workstreams of one owner")
    no.add_argument(
        "--on",
        default="",
        metavar="FACT=VALUE",
        help="or wherever a fact of the proposal has one value, in every workstream: "
        "workstream_status=S, last_by=NAME (who wrote the task's newest word), asked=anyway, "
        "cites=none|other|newer",
    )
    no.add_argument("--expires", default="30d", help="how long it holds (at most 30d)")
    no.add_argument("--lift", action="store_true", help="ask again: lift it")
    _person(no)
    report = ps.add_parser("report", help="how often a person approved, per operation")
    report.add_argument("--days", type=int, default=30, help="the window (default 30)")
    report.add_argument("--json", action="store_true")
    report.add_argument(
        "--by",
        help="who the suggested commands name with --by (default none: they decide as "
        "CUSTODIAN_DECIDER or the OS user)",
    )
    report.add_argument(
        "--hub", help="the hub a suggested grant binds to (default: where the items were seen)"
    )
    for one in (show, put, report, no):
        one.add_argument("--domain", help="the domain (env CUSTODIAN_DOMAIN)")
        one.add_argument("--memory")
    p.set_defaults(handler=lambda args: _cmd_policy(args, load))
    g = sub.add_parser("grants", help="bounded grants: a person's approval given in advance")
    gs = g.add_subparsers(dest="grants_command", required=True)
    issue = gs.add_parser("issue", help="issue a grant; prints its id")
    issue.add_argument("--domain", help="the domain (env CUSTODIAN_DOMAIN)")
    issue.add_argument("--operation", required=True)
    issue.add_argument("--where", action="append", default=[], metavar="KEY=VALUE")
    issue.add_argument("--max", type=int, required=True, help="how many uses")
    issue.add_argument("--expires", required=True, help="how long: 7d, 36h (at most 30d)")
    issue.add_argument(
        "--hub",
        help="state-hub URL, a tracker's (roundup+http://...), or 'embedded' (env STATE_HUB_URL)",
    )
    issue.add_argument(
        "--evidence", choices=["newer"], default=None,
        help="newer: cover only a status write that cites a person's event on the task, newer "
        "than the task's last change and speaking for the move",
    )  # fmt: skip
    issue.add_argument(
        "--on", action="append", default=[], metavar="KEY=VALUE",
        help="a fact of the target it covers: workstream, owner (the workstream's), task_status, "
        "idle_days (at least that many days since the task's last change), owner_set_days (at "
        "least that many days since the owner, or a person through Custodian, set its status), "
        "workstream_status (the workstream's status), last_by (who wrote the task's newest event "
        "of a person), last_kind (that event's kind); KEY=A,B,C: any one of these values",
    )  # fmt: skip
    issue.add_argument("--json", action="store_true")
    _person(issue)
    ls = gs.add_parser("list", help="each grant's uses, what is left, expiry and state")
    ls.add_argument("--domain")
    ls.add_argument("--json", action="store_true")
    revoke = gs.add_parser("revoke", help="revoke a grant at once")
    revoke.add_argument("grant_id")
    _person(revoke)
    for one in (issue, ls, revoke):
        one.add_argument("--memory")
    g.set_defaults(handler=lambda args: _cmd_grants(args, load))


def _person(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", help=BY_HELP)
    p.add_argument("--reason", required=True, help="why, kept in the journal")


def _cmd_policy(args: argparse.Namespace, load: Loader) -> int:
    from custodian_runtime.person import standing as pc

    settings = load(args, hub_required=False)
    domain = str(settings.domain)
    if args.policy_command == "set":
        by = decider(settings, args.by).name
        return pc.set_mode(settings, domain, args.operation, args.mode, by, args.reason, sys.stdout)
    if args.policy_command == "no":
        request = pc.SayNo(
            domain=domain, operation=args.operation, status=args.status, cites=args.cites,
            workstream=args.workstream, owner=args.owner, expires=args.expires,
            lifted=args.lift, by=decider(settings, args.by).name, reason=args.reason,
            on=args.on,
        )  # fmt: skip
        return pc.say_no(settings, request, sys.stdout)
    if args.policy_command == "report":
        return pc.report(settings, domain, args.days, args.json, sys.stdout, by=args.by)
    return pc.show(settings, domain, args.json, sys.stdout)


def _cmd_grants(args: argparse.Namespace, load: Loader) -> int:
    import secrets

    from custodian_runtime.person import standing as pc

    command = args.grants_command
    if command == "list":
        settings = load(args, domain_required=False, hub_required=False)
        return pc.list_grants(settings, args.domain, args.json, sys.stdout)
    if command == "revoke":
        settings = load(args, domain_required=False, hub_required=False)
        by = decider(settings, args.by).name
        return pc.revoke(settings, args.grant_id, by, args.reason, sys.stdout)
    settings = load(args, hub_required=False)
    issue = pc.Issue(
        domain=str(settings.domain), operation=args.operation, where=_where(args.where),
        max_uses=args.max, expires=args.expires, by=decider(settings, args.by).name,
        reason=args.reason,
        grant_id=f"grant-{secrets.token_hex(6)}", evidence=args.evidence,
        on=_where(args.on, "--on"),
    )  # fmt: skip
    return pc.issue(settings, issue, args.json, sys.stdout, sys.stderr)


def _where(pairs: list[str], flag: str = "--where") -> dict[str, str]:
    found: dict[str, str] = {}
    example = "status=blocked" if flag == "--where" else "owner=mia"
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {pair!r}: give KEY=VALUE, e.g. {example}", setting=flag)
        found[key] = value
    return found
