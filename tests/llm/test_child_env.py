"""A `cmd:` model is a real child process that sees only PATH, a private HOME/TMPDIR and locale."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm._child_env import extra_names, minimal_env
from support.runs import hub_get, run_args, run_cli

HUB_TOKEN = "cronjob-test-token"
# The script is the model: it records what it sees and tries to write to the hub on its own.
MODEL_SCRIPT = r"""
import json, os, sys, urllib.error, urllib.request
hub, out = sys.argv[1], sys.argv[2]
token = os.environ.get("STATE_HUB_TOKEN", "")
request = urllib.request.Request(
    hub + "/tasks/web-t-4", method="PATCH", data=json.dumps({"status": "cancelled"}).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + token,
             "Idempotency-Key": "model-side-write-0001"},
)
try:
    patched = urllib.request.urlopen(request, timeout=5).status
except urllib.error.HTTPError as exc:
    patched = exc.code
home, tmp = os.environ.get("HOME", ""), os.environ.get("TMPDIR", "")
open(os.path.join(tmp, "scratch"), "w").write("ok")
report = {"env": dict(os.environ), "patched": patched, "tmp_writable": os.access(tmp, os.W_OK)}
with open(out, "w") as handle:
    json.dump(report, handle)
sys.stdout.write("Nothing to do.\n\n```json\n{\"observations\": []}\n```\n")
"""
SECRETS = {
    "STATE_HUB_TOKEN": HUB_TOKEN,
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "OPENROUTER_API_KEY": "sk-or-secret",
    "GEMINI_API_KEY": "gemini-secret",
    "CUSTODIAN_SEAL_KEY": "seal-secret-" + "0" * 32,  # a seal key has at least 32 characters
}
LOCALE = {"LANG", "LANGUAGE"}


def _run_child_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: ReferenceHub, **env: str
) -> tuple[Any, Path]:
    script = tmp_path / "model.py"
    script.write_text(MODEL_SCRIPT, encoding="utf-8")
    report = tmp_path / "report.json"
    spec = f"cmd:{sys.executable} {script} {hub.url} {report}"
    argv = run_args(hub.url, spec, tmp_path / "memory", "--force", "--json")
    return run_cli(argv, tmp_path, monkeypatch, **SECRETS, **env), report


def test_a_cmd_model_gets_no_token_and_cannot_write_to_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub
) -> None:
    result, report = _run_child_model(
        tmp_path,
        monkeypatch,
        small_hub_with_token,
        LANG="C.UTF-8",
        MY_TOOL_MODE="fast",
        NOT_LISTED="hidden",
        CUSTODIAN_CMD_ENV="MY_TOOL_MODE",
    )
    assert result.code == 0, result.stderr
    seen = json.loads(report.read_text(encoding="utf-8"))
    env = seen["env"]
    allowed = {"PATH", "HOME", "TMPDIR", "MY_TOOL_MODE"} | LOCALE
    assert {name for name in env if not name.startswith("LC_")} <= allowed
    assert env["MY_TOOL_MODE"] == "fast" and env["LANG"] == "C.UTF-8"
    assert not set(SECRETS) & set(env)
    assert not [v for v in env.values() if "secret" in v or HUB_TOKEN in v]
    assert seen["patched"] == 401
    task = hub_get(small_hub_with_token, "/tasks/web-t-4", token=HUB_TOKEN)
    assert task["status"] == "in_progress"
    # HOME and TMPDIR were private to the call and are gone.
    assert env["HOME"] != os.path.expanduser("~") and seen["tmp_writable"]
    assert not Path(env["HOME"]).exists() and not Path(env["TMPDIR"]).exists()


@pytest.mark.parametrize("name", ["STATE_HUB_TOKEN", "OPENAI_API_KEY", "CUSTODIAN_SEAL_KEY"])
def test_listing_a_secret_in_cmd_env_is_refused_before_the_model_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub, name: str
) -> None:
    result, report = _run_child_model(
        tmp_path, monkeypatch, small_hub_with_token, CUSTODIAN_CMD_ENV=f"LANG,{name}"
    )
    assert result.code == 2
    assert f"CUSTODIAN_CMD_ENV names {name}" in result.stderr
    assert not report.exists()


def test_names_are_checked_and_secrets_never_pass() -> None:
    assert extra_names(" A_B , C ,") == ("A_B", "C")
    assert extra_names(None) == ()
    for bad in ("A-B", "1X", "A B"):
        with pytest.raises(ConfigError, match="not a variable name"):
            extra_names(bad)
    with pytest.raises(ConfigError, match="state_hub_token"):
        extra_names("state_hub_token")
    source = {"PATH": "/bin", "STATE_HUB_TOKEN": "t", "LC_ALL": "C", "USER": "me"}
    child = minimal_env(source, "/h", "/t", ("STATE_HUB_TOKEN", "USER"))
    assert child == {"PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", "LC_ALL": "C", "USER": "me"}
