"""`.env` as python-dotenv reads it: comments after quotes, escapes, and errors by line number.

A value is never shown in an error: a `.env` holds tokens and keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ConfigError
from custodian_runtime.settings.dotenv import read_dotenv
from support.runs import run_cli
from support.spine import custodian_cli

SECRET = "sk-live-7f3a9b2c"


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ('KEY="abc" # comment', "abc"),
        ("KEY='abc' # comment", "abc"),
        ("KEY=abc # comment", "abc"),
        ("KEY=abc#not-a-comment", "abc#not-a-comment"),
        ("export KEY=abc", "abc"),
        ("  KEY = abc  ", "abc"),
        ("KEY=", ""),
        ('KEY="a # b"', "a # b"),
        (r'KEY="line\nbreak \"quoted\" back\\slash"', 'line\nbreak "quoted" back\\slash'),
        (r"KEY='single \'quote\' keeps \n'", r"single 'quote' keeps \n"),
        ("KEY=${HOME}/x", "${HOME}/x"),  # taken literally: no expansion
        ("KEY=p$ss'w\"rd", "p$ss'w\"rd"),
    ],
)
def test_a_value_is_read_as_python_dotenv_reads_it(line: str, value: str) -> None:
    assert read_dotenv(f"# settings\n\n{line}\n") == {"KEY": value}


@pytest.mark.parametrize(
    ("text", "number", "problem"),
    [
        (f'A=1\nKEY="{SECRET}\n', 2, "close a quoted value's quote on the same line"),
        (f"A=1\n\n# two blank lines\n\nKEY='{SECRET}\n", 5, "close a quoted value's quote on"),
        (f'KEY="{SECRET}"trailing\n', 1, "with only a # comment after it"),
        (f'\n\nKEY="{SECRET}\nB=1\nC="\n', 3, "opens a quote that is not closed on the same line"),
        (f"A=1\n  \nKEY {SECRET}\n", 3, "is not KEY=VALUE"),
        (f"{SECRET}\n", 1, "is not KEY=VALUE (a variable name, '=', then the value)"),
        (f"1KEY={SECRET}\n", 1, "is not KEY=VALUE (a variable name, '=', then the value)"),
        (f"KEY-NAME={SECRET}\n", 1, "is not KEY=VALUE (a variable name, '=', then the value)"),
    ],
)
def test_a_line_that_cannot_be_read_is_named_by_number_never_by_content(
    text: str, number: int, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        read_dotenv(text)
    assert caught.value.message.startswith(f".env line {number} ")
    assert problem in caught.value.message
    assert SECRET not in caught.value.message
    assert caught.value.setting == ".env" and caught.value.exit_code == 2


def test_an_unterminated_quote_stops_the_run_with_exit_2_and_no_value_shown(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(f'CUSTODIAN_LLM=offline\nSTATE_HUB_TOKEN="{SECRET}\n', "utf-8")
    done = custodian_cli(tmp_path, "run", "--domain", "website", "--hub", "embedded")
    assert done.returncode == 2
    assert "configuration error: .env line 2 is not KEY=VALUE" in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "memory").exists() and not (tmp_path / ".custodian").exists()


def test_a_quoted_token_with_a_comment_reaches_the_hub_without_its_quotes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub
) -> None:
    # The hand-written parser kept the quotes here, and the hub answered 401.
    (tmp_path / ".env").write_text(
        f"STATE_HUB_URL={small_hub_with_token.url}\n"
        'STATE_HUB_TOKEN="cronjob-test-token" # the CronJob\'s token\n'
        "CUSTODIAN_LLM='offline'  # no model key needed\n",
        "utf-8",
    )
    done = run_cli(["run", "--domain", "website", "--json", "--force"], tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    assert done.json()["status"] == "completed"
