"""What `make demo-reset` would drop that a person made: it drops nothing of it unless told to.

A pending approval item waits for a person's decision, a kept word (memory/inbox/, or an earlier
release's memory/decisions/ and memory/standing/) is a person's decision not yet journaled, and a
canon edit is an approved write or a person's own. Each is listed; with any of them the check
exits 1 and says the command that drops them anyway (`make demo-reset FORCE=1`). It reads and
writes nothing else: no kept word is carried out, no index rebuilt.

    python scripts/demo_reset_check.py [MEMORY_DIR] [CANON_DIR]   # defaults: memory canon
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from custodian_runtime.core.approvals.items import effective_status
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.journal.person.queue import ApprovalStore

KEPT = ("inbox", "decisions", "standing")  # the inbox, and the side stores it replaced
GO_ON = "make demo-reset FORCE=1"


def pending_items(memory: Path, now: datetime) -> list[str]:
    """A line for each approval item still waiting for a person (or unreadable)."""
    store = ApprovalStore(memory, write_index=False)
    try:
        items = store.all(verify=False)
    except Exception as error:  # a damaged item file is a person's item too, until read
        return [f"approval items under {store.directory} ({type(error).__name__}: {error})"]
    return [
        f"pending approval item {i.id} ({i.domain}: {i.operation} {_target(i.params)})"
        for i in items
        if effective_status(i, now) == "pending"
    ]


def _target(params: dict[str, object]) -> str:
    for key in ("task_id", "decision_id", "flag_id", "path", "title"):
        if key in params:
            return f"{key}={params[key]}"
    return ""


def kept_words(memory: Path) -> list[str]:
    """A line for each kept word's file (an inbox's `.done` marker holds no word)."""
    found = []
    for name in KEPT:
        root = memory / name
        if root.is_dir():
            found += [
                f"kept word {path}"
                for path in sorted(root.rglob("*"))
                if path.is_file() and path.suffix != ".done" and path.name != ".gitkeep"
            ]
    return found


def canon_edits(canon: Path) -> list[str]:
    """A line for each canon file changed or added since the last commit."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", str(canon)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return [f"canon {canon}: git status failed ({done.stderr.strip()}), so edits are unknown"]
    return [f"canon edit {line[3:]} ({_change(line[:2])})" for line in done.stdout.splitlines()]


def _change(code: str) -> str:
    return "added" if code == "??" else "deleted" if "D" in code else "changed"


def main(argv: list[str]) -> int:
    """Exit 0 when the reset drops nothing a person made; else list it and exit 1."""
    memory = Path(argv[0] if argv else "memory")
    canon = Path(argv[1] if len(argv) > 1 else "canon")
    lines = [
        *pending_items(memory, datetime.now(UTC)),
        *kept_words(memory),
        *canon_edits(canon),
    ]
    if not lines:
        return 0
    said = "\n".join(f"  {for_terminal(line)}" for line in lines)
    sys.stderr.write(
        f"make demo-reset would drop {len(lines)} thing(s) a person made or waits on:\n{said}\n"
        f"Nothing was dropped. Decide the items first (custodian approvals list), or drop them "
        f"anyway: {GO_ON}\n"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
