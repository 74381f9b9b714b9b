"""`cmd:` gets the system and user prompts apart when its command names `{system_file}`.

A real child process (this interpreter running a small script) records what it was given: its
argv, its stdin, and the text of the file its argv names. Without the placeholder the prompt
arrives joined on stdin, as it always did.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.command import CommandModel

SCRIPT = r"""
import json, os, sys
record = {"argv": sys.argv[1:], "stdin": sys.stdin.read(), "files": {}}
for word in sys.argv[1:]:
    path = word.split("=", 1)[-1]
    if os.path.isfile(path):
        record["files"][path] = open(path, encoding="utf-8").read()
open(os.environ["RECORD_TO"], "w").write(json.dumps(record))
sys.stdout.write("Nothing to do.\n\n```json\n{\"observations\": []}\n```\n")
"""
PROMPT = Prompt(system="You look after the state of projects.\nRules follow.", user="Domain ä.")


def _ask(tmp_path: Path, words: str) -> dict[str, Any]:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT, encoding="utf-8")
    record = tmp_path / "record.json"
    env = {"PATH": os.environ.get("PATH", ""), "RECORD_TO": str(record)}
    config = ModelConfig(spec="cmd:x", argument=f"{sys.executable} {script} {words}", env=env,
                         child_env=("RECORD_TO",))  # fmt: skip
    model = CommandModel(config)
    answer = model.complete(PROMPT)
    assert "```json" in answer.text
    seen: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    return seen


def test_without_the_placeholder_the_prompt_arrives_joined_on_stdin(tmp_path: Path) -> None:
    seen = _ask(tmp_path, "--plain")
    assert seen["stdin"] == f"{PROMPT.system}\n\n{PROMPT.user}"
    assert seen["argv"] == ["--plain"] and seen["files"] == {}


def test_the_system_prompt_goes_in_the_file_the_placeholder_names(tmp_path: Path) -> None:
    seen = _ask(tmp_path, "--system-file {system_file} --also=--system={system_file}")
    assert seen["stdin"] == PROMPT.user  # the user prompt alone
    path = seen["argv"][1]
    assert seen["argv"] == ["--system-file", path, "--also=--system=" + path]
    assert seen["files"] == {path: PROMPT.system}
    # The file lay in the call's private TMPDIR, removed when the call ended.
    assert "{system_file}" not in path and not Path(path).exists()
    assert Path(path).name == "system-prompt.txt"
