"""A `cmd:` model that exits non-zero: its own last words reach the error line, the note and --json.

The tail is at most 2 KB of its stderr, made inert (no escape sequence reaches a terminal) and
with known secrets (the hub token, provider keys) redacted.
"""

from __future__ import annotations

import json
from pathlib import Path

from custodian_hub import ReferenceHub
from custodian_runtime.llm.command import STDERR_TAIL, said
from support.spine import finish, run_argv, start_run

LAST_WORDS = "Requested tokens (7270) exceed context window of 512"
TOKEN = "hub-token-0123456789"
KEY = "sk-test-abcdefghijklmnop"


def _failing_model(tmp_path: Path) -> str:
    """A model that reads its prompt, says a lot on stderr (escapes, secrets), and exits 1."""
    script = tmp_path / "llama.py"
    script.write_text(
        "import sys\n"
        "sys.stdin.read()\n"
        "sys.stderr.write('loading weights ' + 'x' * 5000 + '\\n')\n"
        f"sys.stderr.write('\\x1b[31mkey {KEY} token {TOKEN}\\x1b[0m\\n')\n"
        f"sys.stderr.write({LAST_WORDS!r} + '\\n')\n"
        "sys.exit(1)\n"
    )
    return f"cmd:python3 {script}"


def _run_failing_model(tmp_path: Path, hub: ReferenceHub, **env: str) -> tuple[int, str, str]:
    argv = run_argv(hub.url, _failing_model(tmp_path), tmp_path / "memory")
    secrets = {"STATE_HUB_TOKEN": TOKEN, "OPENAI_API_KEY": KEY}
    return finish(start_run(tmp_path, argv, **secrets, **env))


def test_the_failing_model_s_words_are_in_the_error_line_note_and_summary(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    code, out, err = _run_failing_model(tmp_path, small_hub)
    assert code == 4, err
    last = err.splitlines()[-1]
    assert last.startswith("custodian: rejected: cmd:python3 ")
    assert " exited with status 1: xxx" in last and last.endswith(_tail_end())
    summary = json.loads(out)
    assert summary["message"].endswith(_tail_end()) and summary["message"] in last
    tail = summary["model_stderr"]
    assert tail.endswith(LAST_WORDS) and len(tail.encode("utf-8")) <= STDERR_TAIL
    [note] = (tmp_path / "memory" / "working").glob("*.md")
    assert LAST_WORDS in note.read_text("utf-8")
    everything = out + err + note.read_text("utf-8")
    assert "\x1b" not in everything and "\\x1b[31m" in tail  # inert: shown, never acted on
    assert TOKEN not in everything and KEY not in everything
    assert "key *** token ***" in tail


def _tail_end() -> str:
    return f"token ***\\x1b[0m\\n{LAST_WORDS}"


def test_in_json_mode_the_words_are_in_the_final_record(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    code, out, err = _run_failing_model(tmp_path, small_hub, CUSTODIAN_LOG_FORMAT="json")
    assert code == 4, err
    final = json.loads(err.splitlines()[-1])
    assert final["severity"] == "ERROR" and final["exit_code"] == 4
    assert final["message"].endswith(LAST_WORDS)
    assert json.loads(out)["model_stderr"].endswith(LAST_WORDS)
    assert TOKEN not in err + out


def test_the_tail_is_cut_to_2_kb_after_redaction() -> None:
    secret = "s" * 40
    text = ("é" * 3000 + secret + "\n\tdone").encode()
    line = said(text, (secret,))
    assert line.endswith("***\\n\\tdone")
    assert len(line.encode("utf-8")) <= STDERR_TAIL
    assert secret not in line
    assert said(b"  \n", ()) == ""
