"""What an operation is: one write the model may propose, as a frozen spec the runtime reads.

Every fact about an operation lives in its spec: the plan section it is written in, its params,
what the system prompt says of it, who may allow it, its cap and budget, how the authority and
reconcile test it against the hub, the hub call that performs it, and the sentences a person
reads before and after. Pure: the hub client comes in as an argument, and the observation as a
`View`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.view import View

Default = Literal["sanctioned", "approvable"]
Writes = Literal["hub", "canon"]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class Lookup:
    """What a person's sentence needs from the observation: titles and task statuses by id."""

    domain: str = ""
    titles: Mapping[str, str] = field(default_factory=dict)
    statuses: Mapping[str, str] = field(default_factory=dict)

    def named(self, kind: str, ident: object) -> str:
        """`task web-t-05 ‘Set up redirects’`, or `task web-t-05` when the title is unknown."""
        title = self.titles.get(str(ident))
        return f"{kind} {ident} ‘{title}’" if title else f"{kind} {ident}"


@dataclass(frozen=True)
class Landing:
    """What reconcile knows when it looks for a write a killed run may have made."""

    view: View
    events: Sequence[ProgressEvent] = ()
    run_id: str = ""
    # The ids that bore a create's title when it was ruled (its precondition's `same_title`).
    before: tuple[str, ...] = ()
    # A canon write's file hash now (None: no such file); the hub does not hold the canon.
    canon_sha256: str | None = None


Check = Callable[[Params, "View"], "str | None"]
Landed = Callable[[Params, Landing], "str | None"]
Titles = Callable[[Params, "View"], list[str]]
Describe = Callable[[Params, Lookup], str]
# (client, params, run_id, idempotency_key[, if_match]) -> the client's HubWrite; `client` is
# the hub client (the one door), passed in so that the core does no I/O. Only a status write
# takes `if_match`.
HubCall = Callable[..., Any]


@dataclass(frozen=True)
class OperationSpec:
    """One operation and every fact the runtime derives from it."""

    name: str
    section: str  # the plan section the model writes it in (`proposals` for approvable ones)
    params: type[BaseModel]
    default: Default  # sanctioned: runs on its own within caps; approvable: a person decides
    request: str  # the hub request, as the README's tables show it
    landed: Landed  # reconcile: the hub id (or path) that shows it made, None: not found
    describe: Describe  # the one sentence a person reads before, with titles
    # Approvable: its params as the prompt's list shows them (`{domain}` is the run's domain).
    fields: str = ""
    # Sanctioned: its section's rules in the system prompt (`{cap}`: its per-run cap;
    # `{stale_after_days}`), and one entry of the answer's example, as JSON.
    rules: str = ""
    example: str = ""
    done: Describe | None = None  # the sentence a person reads after: `created task ‘…’ in …`
    call: HubCall | None = None  # None: not a hub write (`writes` says what it writes)
    writes: Writes = "hub"
    cap: str = "max_queued"  # its cap key: the Limits field of its per-run cap
    budget: str | None = None  # the Limits field of its rolling budget per domain, if any
    targets: tuple[str, ...] = ()  # the param keys that name what it is about
    already_done: Check | None = None  # why it would change nothing on the hub as observed
    # A create: why it nearly repeats, in other words, an open one in its scope (denied, naming
    # it, before anyone is asked; core/operations/near.py).
    repeats: Check | None = None
    # A create: why it nearly repeats an open one elsewhere in the domain (another workstream):
    # not denied, since a person may mean it, but asked with that one named, and never run
    # under a grant, which was given for a class, not for a repeat (core/authority/asked.py).
    repeats_elsewhere: Check | None = None
    conflict: str | None = None  # one per task per plan: items sharing this key conflict
    status_write: bool = False  # sets a task's status: sent only on the task as observed
    evidence: bool = False  # runs on its own only when the events it cites prove it
    # The params whose text becomes the hub's record: they name only observed ids
    # (core/authority/grounded.py); `news`, the one that may not repeat a person's event.
    grounded: tuple[str, ...] = ()
    news: str | None = None
    # The param listing the observed events or tasks the write rests on: each must be one.
    rests: str | None = None
    route: Callable[[Params], str | None] | None = None  # another operation these params need
    person_sends: bool = True  # an approved item of it is carried out (False: never queued)
    never_granted: str | None = None  # why a person never grants it in advance (None: they may)
    creates: Titles | None = None  # a create: the ids that already bear its title
    in_domain: bool = False  # its hub call names the run's domain (a decision's)
    # What the hub holds for a param the write leaves out: a grant compares params as held.
    hub_defaults: Mapping[str, str] = field(default_factory=dict)
    executes: Describe | None = None  # what a sanctioned write does, for its ruling's reason
    when: str = "never; a person approves it"  # the README's "when it runs on its own"

    def __post_init__(self) -> None:
        if self.default == "sanctioned":
            needs = {
                "call": self.call,
                "executes": self.executes,
                "rules": self.rules,
                "example": self.example,
            }
            missing = [name for name, given in needs.items() if not given]
            if missing:
                raise ValueError(
                    f"{self.name}: a sanctioned operation needs a hub call (`call`), `executes`, "
                    f"`rules` and `example`; give it {', '.join(missing)}"
                )
        elif not self.fields:
            raise ValueError(f"{self.name}: an approvable operation needs its `fields` line")
