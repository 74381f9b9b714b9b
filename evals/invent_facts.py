#!/usr/bin/env python3
"""A scripted `cmd:` model that invents facts and copies a person's, as a small model does.

It reads the prompt on stdin and, for the first event a person wrote, answers with what a model
that copies its examples writes: that event's text again as a new event, an event and a flag
that name ids the hub does not hold (the prompt example's `E-31` and `T-4`, one as what the event
rests on), the person's event said again under its own id, and a status change of the event's
task that cites an event that does not exist. `custodian eval` runs it to show
that none of it reaches the hub.

    custodian eval --llm "cmd:python3 evals/invent_facts.py" --only invented-facts copied-event
"""

from __future__ import annotations

import json
import re
import sys

# One line of the events data block: `id age type workstream task | source | summary`.
_EVENT = re.compile(
    r"^(?P<id>\S+) \S+ \S+ (?P<ws>\S+) (?P<task>\S+) \| (?P<source>[^|]*) \| (?P<summary>.*)$"
)


def _person_event(text: str) -> dict[str, str] | None:
    """The first event in the prompt's events block that Custodian did not write."""
    block = re.search(r"^<<<DATA \S+ events: [^\n]*>>>\n(.*?)^<<<END DATA", text, re.S | re.M)
    for line in (block.group(1) if block else "").splitlines():
        found = _EVENT.match(line)
        if found and found["source"].strip() != "custodian" and found["task"] != "-":
            return found.groupdict()
    return None


def plan(text: str) -> dict[str, object]:
    """The invented and copied writes about the first person's event, or an empty plan."""
    event = _person_event(text)
    if event is None:
        return {"observations": ["Nothing to copy."]}
    ws, task, said = event["ws"], event["task"], event["summary"].replace("\\|", "|")
    return {
        "observations": [f"{task} has news."],
        "progress_events": [
            {"workstream_id": ws, "task_id": task, "event_type": "observation",
             "rests_on": [task], "summary": said},
            {"workstream_id": ws, "task_id": task, "event_type": "observation",
             "rests_on": ["E-31"],
             "summary": "Event E-31 reports the redirect map was reviewed and approved by SEO."},
            {"workstream_id": ws, "task_id": task, "event_type": "observation",
             "rests_on": [event["id"]], "summary": f"As {event['id']} says, {said}"},
        ],
        "tasks_to_update": [{"task_id": task, "status": "done", "evidence": ["evt-990031"]}],
        "tasks_to_flag": [{"task_id": task, "note": "T-4 waits on this; please decide."}],
    }  # fmt: skip


def main() -> int:
    """Read the prompt, print the plan."""
    block = json.dumps(plan(sys.stdin.read()), indent=2)
    sys.stdout.write(f"Recording the news.\n\n```json\n{block}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
