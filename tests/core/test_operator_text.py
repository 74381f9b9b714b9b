"""Model text cannot forge what the operator reads: one line per item, escapes visible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.inert import BIDI_CONTROLS
from support.runs import CANON, CliResult, hub_get, plan_response, run_cli, run_plan

# Cursor up + erase line (hides the line above), a carriage return that overwrites the start of
# the line, a forged line after LF, and a right-to-left override.
ERASE_ABOVE = "\x1b[1A\x1b[2K"
FORGED = "\r  executed    update_task_status web-t-4 -> web-t-4: ok"
EVIL_PLAN: dict[str, Any] = {
    "observations": [f"all good{ERASE_ABOVE}\nreally\u202e"],
    "tasks_to_update": [
        {"task_id": "web-t-3", "status": "blocked", "reason": f"stuck{ERASE_ABOVE}"},
        {"task_id": f"plat-t-1{FORGED}", "status": "done", "reason": "x"},
    ],
    "proposals": [
        {
            "operation": "create_workstream",
            "rationale": "tidy\x9b2K",
            "params": {
                "domain": "website",
                "title": f"Sitemap{ERASE_ABOVE}\rapr-0 executed\u2066lol\u2069\n",
            },
        },
        {
            "operation": "create_task",
            "rationale": f"needed{FORGED}",
            "params": {"workstream_id": "web-ws-1", "title": "ok\x1b]0;pwned\x07"},
        },
    ],
}
RAW = ("\x1b", "\r", "\x9b", "\x07", *BIDI_CONTROLS)


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in RAW if ch in text]


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> CliResult:
    return run_cli([*argv], tmp_path, monkeypatch)


def test_the_run_summary_shows_one_line_per_item_with_escapes_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    result = run_plan(tmp_path, monkeypatch, small_hub.url, EVIL_PLAN)
    assert result.code == 0, result.stderr
    assert _raw_controls(result.stdout) == [] and _raw_controls(result.stderr) == []
    lines = result.stdout.splitlines()
    kinds = [line.split()[0] for line in lines[1:] if line.startswith("  ")]
    # 1 observation, 3 queued, 1 denied: each exactly one line, nothing executed.
    assert sorted(kinds) == ["denied", "observed", "queued", "queued", "queued"]
    denied = next(line for line in lines if line.startswith("  denied"))
    assert "plat-t-1\\r  executed" in denied
    assert not any(line.lstrip().startswith("executed") for line in lines)
    assert "\\x1b[1A\\x1b[2K" in result.stdout and "\\u202e" in result.stdout
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    for line in result.stderr.splitlines():
        assert line.startswith("custodian: ")


def test_approvals_list_and_show_keep_every_pending_item_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    assert run_plan(tmp_path, monkeypatch, small_hub.url, EVIL_PLAN).code == 0
    memory = str(tmp_path / "memory")
    listed = _cli(tmp_path, monkeypatch, "approvals", "--memory", memory, "list")
    assert listed.code == 0
    lines = listed.stdout.splitlines()
    # Two lines per item: what it is, then its rationale, indented.
    assert len(lines) == 6 and all(" pending " in line for line in lines[::2])
    assert all(line.startswith("    ") for line in lines[1::2])
    assert _raw_controls(listed.stdout) == []
    assert any('title="Sitemap\\x1b[1A\\' in x for x in lines), lines
    assert all(len(line) <= 100 for line in lines)
    as_json = _cli(tmp_path, monkeypatch, "approvals", "--memory", memory, "list", "--json")
    items = json.loads(as_json.stdout)
    assert _raw_controls(as_json.stdout) == [] and len(items) == 3
    title = next(i for i in items if i["operation"] == "create_workstream")["params"]["title"]
    assert title == EVIL_PLAN["proposals"][0]["params"]["title"]  # same value, escaped text
    shown = _cli(tmp_path, monkeypatch, "approvals", "--memory", memory, "show", items[0]["id"])
    assert shown.code == 0 and _raw_controls(shown.stdout) == []
    assert shown.stdout.startswith(items[0]["id"] + ": ")
    evil = next(i for i in items if i["operation"] == "create_workstream")["id"]
    shown = _cli(tmp_path, monkeypatch, "approvals", "--memory", memory, "show", evil)
    assert _raw_controls(shown.stdout) == []
    assert "    Sitemap\\x1b[1A\\x1b[2K\\rapr-0 executed\\u2066lol\\u2069\n" in shown.stdout
    assert "rationale:     tidy\\x9b2K\n" in shown.stdout
    raw = _cli(
        tmp_path, monkeypatch, "approvals", "--memory", memory, "show", items[0]["id"], "--json"
    )
    assert raw.code == 0 and _raw_controls(raw.stdout) == []
    assert json.loads(raw.stdout)["id"] == items[0]["id"]


def test_inspect_shows_the_run_with_escapes_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    assert run_plan(tmp_path, monkeypatch, small_hub.url, EVIL_PLAN).code == 0
    memory = str(tmp_path / "memory")
    shown = _cli(tmp_path, monkeypatch, "inspect", "--memory", memory, "--domain", "website")
    assert _raw_controls(shown.stdout) == []
    assert "DENIED" in shown.stdout and "replay: ok" in shown.stdout
    # Lines carry the forged text only as part of the item's line, never as a line of their own.
    assert not any(line.lstrip().startswith("executed") for line in shown.stdout.splitlines())


FORGED_PROSE = """All checked.

## Actions

### Executed (1)

- `update_task_status` on `web-t-3`: status → done
  Done. **Result:** hub id `web-t-3`

Actions
=======

> # Observations
<h2>Executed</h2>
<!-- hide what follows"""


def test_prose_cannot_imitate_the_notes_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    open_fence = "\nAnd then:\n~~~\nnever closed\n"
    answer.write_text(plan_response(EVIL_PLAN, prose=FORGED_PROSE) + open_fence, encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--json"]
    result = _cli(tmp_path, monkeypatch, *argv)
    assert result.code == 0, result.stderr
    note = Path(result.json()["note"]).read_text(encoding="utf-8")
    lines = note.splitlines()
    headings = [line for line in lines if line.startswith("#")]
    assert [h for h in headings if len(h) - len(h.lstrip("#")) <= 3] == [
        headings[0],  # "# Custodian session: ..."
        "## Actions",
        "### Queued for a person's approval (3)",
        "### Denied (1)",
        "## Observations",
        "## Reasoning",
    ]
    assert "##### Actions" in lines and "###### Executed (1)" in lines
    assert "\\=======" in lines and "> #### Observations" in lines
    assert "&lt;h2>Executed&lt;/h2>" in lines and "&lt;!-- hide what follows" in lines
    assert lines.index("## Reasoning") > lines.index("## Observations")
    # The fence the prose left open is closed before the note's prose marker.
    assert note.index("never closed\n~~~\n") < note.index("<!-- /custodian:prose -->")
    assert _raw_controls(note) == []
    assert "plat-t-1\\r  executed" in note and "\\x1b[1A\\x1b[2K" in note
