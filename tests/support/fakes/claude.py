"""A fake `claude` executable: records how it was called and answers like the real CLI's JSON mode.

The script is plain Python with a shebang to the current interpreter. Each call takes the next
behaviour from its script (the last one repeats) and appends a record of argv, stdin, cwd (and
its listing), environment and the content of a `--system-prompt-file` to `calls.jsonl` beside it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ANSWER = 'No changes needed.\n\n```json\n{"actions": []}\n```'

SCRIPT = r"""#!{python}
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = os.path.join(HERE, "state.json")
with open(STATE) as f:
    state = json.load(f)
n = state["calls"]
state["calls"] = n + 1
with open(STATE, "w") as f:
    json.dump(state, f)
behaviour = state["script"][min(n, len(state["script"]) - 1)]
record = {{
    "argv": sys.argv,
    "stdin": sys.stdin.read(),
    "cwd": os.getcwd(),
    "cwd_listing": sorted(os.listdir(".")),
    "env": dict(os.environ),
    "home_writable": os.access(os.environ.get("HOME", "/nonexistent"), os.W_OK),
}}
if "--system-prompt-file" in sys.argv:
    with open(sys.argv[sys.argv.index("--system-prompt-file") + 1], encoding="utf-8") as f:
        record["system_prompt_file"] = f.read()
if behaviour["kind"] == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    record["grandchild_pid"] = child.pid
with open(os.path.join(HERE, "calls.jsonl"), "a") as f:
    f.write(json.dumps(record) + "\n")
if behaviour["kind"] == "hang":
    time.sleep(60)
sys.stderr.write(behaviour.get("stderr", ""))
if "stdout" in behaviour:
    sys.stdout.write(behaviour["stdout"])
else:
    sys.stdout.write(json.dumps(behaviour["result"]) + "\n")
sys.exit(behaviour.get("exit", 0))
"""


def result(**fields: Any) -> dict[str, Any]:
    """A result object shaped like `claude -p --output-format json` prints it."""
    base: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "api_error_status": None,
        "duration_ms": 157,
        "num_turns": 1,
        "result": ANSWER,
        "stop_reason": "end_turn",
        "session_id": "2d6bd4a4-8c7e-4f9b-9a53-0c1e8c2f1a11",
        "total_cost_usd": 0.000081,
        "usage": {
            "input_tokens": 12,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 3,
        },
        "modelUsage": {
            "claude-sonnet-4-5": {"inputTokens": 12, "outputTokens": 3, "costUSD": 0.000081}
        },
        "permission_denials": [],
        "terminal_reason": "completed",
        "uuid": "0b9f3c1e-1111-4a2b-8c3d-5e6f7a8b9c0d",
    }
    return {**base, **fields}


SUCCESS: dict[str, Any] = {"kind": "answer", "result": result()}
RATE_LIMITED: dict[str, Any] = {
    "kind": "answer",
    "exit": 1,
    "result": result(
        is_error=True,
        api_error_status=429,
        result="API Error: Request rejected (429) · Number of requests exceeded your rate limit",
    ),
}
NOT_LOGGED_IN: dict[str, Any] = {
    "kind": "answer",
    "exit": 1,
    "result": result(is_error=True, result="Not logged in · Please run /login"),
}
MAX_TURNS: dict[str, Any] = {
    "kind": "answer",
    "exit": 1,
    "result": {
        **{k: v for k, v in result().items() if k != "result"},
        "subtype": "error_max_turns",
        "errors": ["Reached maximum number of turns (1)"],
    },
}
GARBAGE: dict[str, Any] = {"kind": "answer", "stdout": "Hello! I am not JSON.\n", "exit": 0}
USAGE_ERROR: dict[str, Any] = {
    "kind": "answer",
    "stdout": "",
    "stderr": "error: unknown option '--bogus'\n",
    "exit": 1,
}
HANG: dict[str, Any] = {"kind": "hang", "stderr": ""}


class FakeClaude:
    """Writes the fake CLI into `directory` with a script of behaviours, and reads its records."""

    def __init__(self, directory: Path, *behaviours: dict[str, Any]) -> None:
        self.directory = directory
        self.path = directory / "claude"
        self.path.write_text(SCRIPT.format(python=sys.executable))
        self.path.chmod(0o755)
        self.set_script(*(behaviours or (SUCCESS,)))

    def set_script(self, *behaviours: dict[str, Any]) -> None:
        """Replace the behaviours; the call counter restarts."""
        state = {"calls": 0, "script": list(behaviours)}
        (self.directory / "state.json").write_text(json.dumps(state))

    def calls(self) -> list[dict[str, Any]]:
        """One record per run of the fake, oldest first."""
        log = self.directory / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line]
