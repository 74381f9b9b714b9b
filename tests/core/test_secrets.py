"""A password in the hub URL, or a secret on a bad `.env` line, is never shown or stored."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest

from custodian_runtime.core.redact import redact
from custodian_runtime.statehub.client import StateHubClient
from support.spine import (
    THREE_WRITES,
    custodian_cli,
    custodian_events,
    finish,
    held_hub,
    run_argv,
    start_run,
    write_plan,
)

PASSWORD = "Pa55-w0rd-4f9c"


def _everything_written(root: Path) -> str:
    """Every file under `root`, as text, joined."""
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file()
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("http://ops:secret@hub:8765/x", "http://***@hub:8765/x"),
        ("GET https://tok@hub/state then http://a:b%40c@h:1", "GET https://***@hub/state then"),
        ("http://hub:8765/no-credentials", "http://hub:8765/no-credentials"),
    ],
)
def test_redact_hides_the_userinfo_of_every_url(text: str, shown: str) -> None:
    assert redact(text).startswith(shown)
    assert "secret" not in redact(text) and "b%40c" not in redact(text)


def test_the_client_sends_url_credentials_as_basic_auth_never_in_a_url() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(503, json={"error": {"code": "down", "message": "down"}})

    client = StateHubClient(
        f"http://ops:{PASSWORD}@hub.test:8765",
        transport=httpx.MockTransport(answer),
        max_attempts=1,
        sleep=lambda s: None,
    )
    with client, pytest.raises(Exception) as caught:
        client.state_summary()
    assert client.base_url == "http://hub.test:8765"
    assert str(seen[0].url) == "http://hub.test:8765/state/summary"
    expected = base64.b64encode(f"ops:{PASSWORD}".encode()).decode()
    assert seen[0].headers["Authorization"] == f"Basic {expected}"
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_hub_password_appears_in_no_output_log_note_or_journal(
    tmp_path: Path, log_format: str
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        url = hub.url.replace("http://", f"http://custodian:{PASSWORD}@")
        argv = run_argv(url, llm, memory)
        code, out, err = finish(start_run(tmp_path, argv, CUSTODIAN_LOG_FORMAT=log_format))
        assert len(custodian_events(hub)) == 1  # the run did reach the hub and write
    assert code == 0, err
    assert json.loads(out)["hub"].startswith("http://***@127.0.0.1:")
    assert PASSWORD not in out + err
    assert PASSWORD not in _everything_written(memory)
    assert (memory / "working").is_dir() and (memory / "journal").is_dir()


def test_a_failing_hub_with_a_password_leaves_it_nowhere(tmp_path: Path) -> None:
    """The error names the URL it could not reach: without the password, in every place."""
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        plain = hub.url
        url = plain.replace("http://", f"http://custodian:{PASSWORD}@")
        code, _, err = finish(start_run(tmp_path, run_argv(url, llm, memory)))
        assert code == 0, err
    # The hub is gone now: the next run fails under the lock and writes a note saying why.
    argv = run_argv(url, llm, memory, "--force")
    code, out, err = finish(
        start_run(tmp_path, argv, STATE_HUB_MAX_ATTEMPTS="1", STATE_HUB_TIMEOUT_S="2")
    )
    assert code == 3, err
    assert plain in err
    assert PASSWORD not in out + err
    notes = [p.read_text("utf-8") for p in (memory / "working").glob("*.md")]
    assert len(notes) == 2 and any(plain in note and "failed" in note for note in notes)
    assert PASSWORD not in _everything_written(memory)


def test_a_malformed_url_with_a_password_is_reported_without_it(tmp_path: Path) -> None:
    done = custodian_cli(
        tmp_path, "run", "--domain", "website", "--llm", "offline",
        "--hub", f"ftp://custodian:{PASSWORD}@hub",
    )  # fmt: skip
    assert done.returncode == 2
    assert "is not an http(s) URL" in done.stderr and PASSWORD not in done.stderr


def test_a_malformed_dotenv_line_is_named_by_its_number_not_its_content(tmp_path: Path) -> None:
    secret = "sk-live-7f3a9b2c"
    (tmp_path / ".env").write_text(f"CUSTODIAN_LLM=offline\nANTHROPIC_API_KEY {secret}\n", "utf-8")
    done = custodian_cli(tmp_path, "run", "--domain", "website", "--hub", "embedded")
    assert done.returncode == 2
    assert ".env line 2 is not KEY=VALUE" in done.stderr
    assert secret not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
