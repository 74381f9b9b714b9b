"""A `cmd:` model for a fleet of small domains: `fleet_model.py SECONDS [MARKS]`.

It reads the prompt on stdin, finds its domain (the overview's "(this run)" row), leaves a file
named after the domain in MARKS when given, sleeps SECONDS, and proposes one progress event on
the domain's task 1, unless the prompt already shows that event: a model that does each piece
of work once, so that a test can count every write on the hub.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

SUMMARY = "Looked at by the fleet model."


def main() -> int:
    """Answer one prompt."""
    prompt = sys.stdin.read()
    found = re.search(r"\| (d\d{4}) \(this run\) \|", prompt)
    if found is None:
        print("no domain in the prompt", file=sys.stderr)
        return 3
    domain = found[1]
    if len(sys.argv) > 2:
        Path(sys.argv[2], domain).write_text("asked\n", encoding="utf-8")
    time.sleep(float(sys.argv[1]))
    plan: dict[str, object] = {"observations": [f"{domain} looked at."]}
    if SUMMARY not in prompt:
        plan["progress_events"] = [{"workstream_id": f"{domain}-ws", "task_id": f"{domain}-t1",
                                    "event_type": "observation",
                                    "rests_on": [f"{domain}-t1"], "summary": SUMMARY}]  # fmt: skip
    print(f"Looked at {domain}.\n\n```json\n{json.dumps(plan)}\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
