"""Settling an open write by hand: which write a person names, and the record of their decision.

A write whose answer never came, or that a killed run left, stays open until a run settles it by
observing the hub. When that hub is gone, a person closes it: `custodian journal settle REF`.
The REF of an open write is `<domain>:<seq>`, the seq of its `authorized` record, as `inspect`
lists it under "open writes". The closing is that person's decision: `settled_by_hand`, its own
run (`by-hand-<nonce>`), with the write's key; its settled outcome is `closed by hand`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from custodian_runtime.core.journal.kinds import SettledByHand
from custodian_runtime.core.ruling.spine import PendingWrite

_REF = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*):([1-9][0-9]*)$")
CLOSED_BY_HAND = "closed by hand"


def write_ref(domain: str, pending: PendingWrite) -> str:
    """The id a person passes to `journal settle`: `<domain>:<seq of its authorized record>`."""
    return f"{domain}:{pending.authorized_seq}"


def parse_ref(text: str) -> tuple[str, int]:
    """`website:42` as (domain, seq); anything else raises ValueError saying the form."""
    match = _REF.match(text.strip())
    if match is None:
        raise ValueError(
            f"{text!r} is not an open write's id: give <domain>:<seq> as `custodian inspect "
            "--domain D` lists it under open writes (e.g. website:42)"
        )
    return match.group(1), int(match.group(2))


def open_write(pending: Sequence[PendingWrite], domain: str, seq: int) -> PendingWrite:
    """The open write authorized at `seq`; ValueError naming the open ones if there is none."""
    for write in pending:
        if write.authorized_seq == seq:
            return write
    listed = ", ".join(write_ref(domain, w) for w in pending) or "none"
    raise ValueError(
        f"{domain}:{seq} is not an open write of {domain} (open writes: {listed}); a write "
        "already settled stays as it was"
    )


def by_hand(pending: PendingWrite, ref: str, by: str, reason: str) -> SettledByHand:
    """The `settled_by_hand` record: which write, by whom, why, and its outcome."""
    return SettledByHand(
        run_id_of_the_open_write=pending.run_id,
        index=pending.index,
        ref=ref,
        operation=pending.operation,
        idempotency_key=pending.idempotency_key,
        by=by,
        reason=reason,
        outcome=CLOSED_BY_HAND,
    )


def open_write_lines(domain: str, pending: Sequence[PendingWrite]) -> list[str]:
    """What `inspect` lists under "open writes": each one's id, what it is, and how it settles."""
    if not pending:
        return []
    lines = [f"open writes ({len(pending)}): the next run settles each by observing the hub"]
    for write in pending:
        state = "dispatched" if write.dispatched else "authorized, not dispatched"
        lines.append(
            f"  {write_ref(domain, write)}  {write.operation}  run {write.run_id} "
            f"#{write.index}  {state}  key={write.idempotency_key}"
        )
    ref = write_ref(domain, pending[0])
    lines.append(f"  if its hub is gone: custodian journal settle {ref} --reason TEXT")
    return lines
