"""A skip on the hub's 304 loads only what decides it (run/_quick.py), against a real reference hub.

It journals the records the typed run journals, byte for byte, on the same chain; it declines
(writing nothing) whenever the full run would read the domain, and then the full run decides.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.journal.kinds import Finished, RunStarted, encode
from custodian_runtime.core.journal.observation import CompletedObservation
from custodian_runtime.core.journal.records import make_record
from custodian_runtime.core.journal.seals import SealKey, seal_record
from custodian_runtime.core.journal.words import decision_word
from custodian_runtime.core.outcomes import counts
from custodian_runtime.core.skip.unchanged import not_modified_data, not_modified_record
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.skip_facts import JournalEnd
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.run import run
from custodian_runtime.run._quick import quick_skip
from custodian_runtime.run._quick_append import Appender
from custodian_runtime.run._quick_result import SKIP_COUNTS, QuickResult
from custodian_runtime.run._result import RunSoFar
from custodian_runtime.run._started import started_data
from custodian_runtime.settings import Settings, load_settings
from support.runs import CANON
from support.spine import journal, of_run, write_plan

KEY = "k" * 40
AT = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
QUIET = {"observations": ["Nothing to do."]}


def _settings(tmp_path: Path, hub: ReferenceHub, *, force: bool = False, **env: str) -> Settings:
    llm = write_plan(tmp_path / "answer.md", QUIET)
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "force": force,
             "memory": str(tmp_path / "memory"), "canon": str(env.pop("canon", CANON))}  # fmt: skip
    return load_settings(flags, {"PATH": "/usr/bin:/bin", **env}, tmp_path)


def _skipped_once(tmp_path: Path, hub: ReferenceHub, **env: str) -> Settings:
    """A completed run, then a skip by the full run: the facts a quick skip reads are kept."""
    with (tmp_path / "stderr").open("a") as err:
        assert run(_settings(tmp_path, hub, force=True, **env), stderr=err).status == "completed"
        settings = _settings(tmp_path, hub, **env)
        assert run(settings, stderr=err).status == "skipped"
    return settings


def _runs(tmp_path: Path) -> list[str]:
    """The run ids of the domain's journal, in order."""
    return list(dict.fromkeys(r.run_id for r in journal(tmp_path / "memory")))


def _size(tmp_path: Path) -> int:
    return (tmp_path / "memory" / "journal" / "website.jsonl").stat().st_size


def test_an_unchanged_domain_skips_on_the_facts_and_the_journal_verifies(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    settings = _skipped_once(tmp_path, small_hub, CUSTODIAN_SEAL_KEY=KEY)
    with (tmp_path / "stderr").open("a") as err:
        quick = quick_skip(settings, stderr=err)
    assert quick is not None and (quick.status, quick.exit_code) == ("skipped", 0)
    assert "unchanged since run" in quick.message
    records = of_run(journal(tmp_path / "memory"), quick.run_id)
    assert [r.kind for r in records] == ["run_started", "observed", "finished"]
    # The full run's skip just before journaled the same data (but the process that wrote it).
    full = of_run(journal(tmp_path / "memory"), _runs(tmp_path)[-2])
    assert [r.kind for r in full] == [r.kind for r in records]
    for theirs, ours in zip(full, records, strict=True):
        assert {**theirs.data, "pid": 0} == {**ours.data, "pid": 0}
    # The whole journal reads back typed, its chain and every seal checked.
    JournalStore(tmp_path / "memory", seal_key=settings.seal_key).read("website")
    again = quick_skip(settings, stderr=(tmp_path / "stderr").open("a"))  # chained on its own
    assert again is not None and again.status == "skipped"
    with (tmp_path / "stderr").open("a") as err:  # the full run reads the tail the skips left
        later = run(_settings(tmp_path, small_hub, force=True, CUSTODIAN_SEAL_KEY=KEY), stderr=err)
    assert later.status == "completed", later.message
    JournalStore(tmp_path / "memory", seal_key=settings.seal_key).read("website")


@pytest.mark.parametrize("key", [None, KEY])
def test_its_records_are_the_typed_ones_byte_for_byte(
    tmp_path: Path, small_hub: ReferenceHub, key: str | None
) -> None:
    env = {"CUSTODIAN_SEAL_KEY": key} if key else {}
    settings = _settings(tmp_path, small_hub, **env)
    last = CompletedObservation(AT, "d" * 64, {}, "s" * 64, "2026-12-01T07:59:00Z", "r-1", 7, "i")
    finished = {"status": "skipped", "exit_code": 0, "counts": SKIP_COUNTS,
                "model": "m-1", "usage": {}}  # fmt: skip
    entries = [
        RunStarted(**started_data(settings, "http://hub")),
        not_modified_record(last, 8),
        Finished(**finished),
    ]
    datas = [started_data(settings, "http://hub"), not_modified_data(last, 8), finished]
    path = tmp_path / "website.jsonl"
    path.write_bytes(b"")
    writer = Appender(path, settings, "r-2", JournalEnd(41, "a" * 64, 0), lambda: AT)
    for (kind, _), data in zip(map(encode, entries), datas, strict=True):
        writer.append(kind, data)
    expected, prev = [], make_record(None, "r-1", "website", "finished", AT, {})
    prev = prev.model_copy(update={"seq": 41, "hash": "a" * 64})
    for entry in entries:
        kind, data = encode(entry)
        record = make_record(prev, "r-2", "website", kind, AT, data)
        record = seal_record(SealKey(key), record) if key else record
        expected.append(record.line() + "\n")
        prev = record
    assert path.read_text() == "".join(expected)


def test_its_summary_and_line_are_those_of_the_run_result() -> None:
    quick = QuickResult("r-9", "website", "http://hub", "offline", "m", "skipped", 0, "why")
    so_far = RunSoFar("r-9", "website", False, "offline", hub="http://hub", model="m")
    result = so_far.ended("skipped", 0, "why")
    assert quick.summary() == result.summary()
    assert list(quick.summary()) == list(result.summary())
    assert quick.human() == result.human()
    assert counts((), dry_run=False) == SKIP_COUNTS


def _word(tmp_path: Path, _hub: ReferenceHub, _s: Settings) -> None:
    word = decision_word(
        "website", "apr-00000000-0001", "approve", "ana", None, AT, "w-000000000001"
    )
    Inbox(tmp_path / "memory").append(word)


def _hub_moved(_tmp: Path, hub: ReferenceHub, _s: Settings) -> None:
    httpx.patch(hub.url + "/tasks/web-t-3", json={"status": "in_progress"}).raise_for_status()


def _appended(tmp_path: Path, _hub: ReferenceHub, _s: Settings) -> None:
    with (tmp_path / "memory" / "journal" / "website.jsonl").open("ab") as file:
        file.write(b'{"torn')  # a torn tail: the journal no longer ends with the facts' head


def _facts_edited(tmp_path: Path, _hub: ReferenceHub, _s: Settings) -> None:
    path = tmp_path / "memory" / "journal" / "website.skip.json"
    facts: dict[str, Any] = json.loads(path.read_text())
    facts["open_writes"] = 0 if facts["open_writes"] else 1
    path.write_text(json.dumps(facts))


def _canon_changed(tmp_path: Path, _hub: ReferenceHub, settings: Settings) -> None:
    (settings.canon_dir / "constitution.md").write_text("Another constitution.\n")


def _window_passed(_tmp: Path, _hub: ReferenceHub, _s: Settings) -> None:
    """The clock moves past the skip window (quick_skip is handed a later clock)."""


def _nothing(_tmp: Path, _hub: ReferenceHub, _s: Settings) -> None:
    """Nothing changed: the control, a skip."""


@pytest.mark.parametrize(
    "change", [_word, _hub_moved, _appended, _facts_edited, _canon_changed, _window_passed]
)
def test_it_declines_and_writes_nothing_when_the_full_run_would_read(
    tmp_path: Path, small_hub: ReferenceHub, change: Any
) -> None:
    assert _quick_after(tmp_path, small_hub, change) is None


def test_the_same_setup_with_nothing_changed_skips(tmp_path: Path, small_hub: ReferenceHub) -> None:
    found = _quick_after(tmp_path, small_hub, _nothing)
    assert found is not None and found.status == "skipped"


def _quick_after(tmp_path: Path, small_hub: ReferenceHub, change: Any) -> QuickResult | None:
    """A skip by the full run, `change`, then a quick skip: what it found; when None, the
    journal is as it was."""
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    settings = _skipped_once(tmp_path, small_hub, CUSTODIAN_SEAL_KEY=KEY, canon=str(canon))
    change(tmp_path, small_hub, settings)
    size = _size(tmp_path)
    later = datetime.now(UTC) + timedelta(days=2)
    clock = (lambda: later) if change is _window_passed else datetime.now
    with (tmp_path / "stderr").open("a") as err:
        found = quick_skip(settings, stderr=err, clock=lambda: clock().astimezone(UTC))
    if found is None:
        assert _size(tmp_path) == size
    return found


def test_a_skip_in_its_own_process_loads_no_pydantic_and_no_rendering(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    settings = _skipped_once(tmp_path, small_hub)
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--memory",
            str(tmp_path / "memory"), "--canon", str(CANON), "--llm", settings.model.spec,
            "--json"]  # fmt: skip
    probe = (
        "import sys, json\n"
        "from custodian_runtime.cli import main\n"
        f"code = main({argv!r})\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'jinja2')\n"
        "               or m.startswith(('custodian_runtime.render', 'custodian_runtime.run._')))\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB"))}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60, check=False)  # fmt: skip
    said = json.loads(done.stderr.strip().splitlines()[-1])
    assert json.loads(done.stdout)["status"] == "skipped", done.stderr
    light = tuple(f"custodian_runtime.run.{m}" for m in
                  ("_quick", "_quick_result", "_quick_append", "_inputs", "_started"))  # fmt: skip
    assert said["code"] == 0
    assert [m for m in said["heavy"] if m not in light] == []
