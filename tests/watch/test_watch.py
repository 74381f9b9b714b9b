"""`custodian watch` against a real reference hub: which domains a pass runs, and failures.

The loop is driven pass by pass in-process (`Watch.pass_once`, its runs in a thread pool that
the test waits for); signals are in tests/watch/test_watch_signals.py, with `custodian watch` as a
child process.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from custodian_hub import ReferenceHub
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.core.metrics import LAST_CHECK
from custodian_runtime.metrics import MetricsServer, StatusRequest, status_command
from custodian_runtime.settings import Settings, load_settings
from custodian_runtime.watch import Watch, WatchRequest, parse_shard, shard_of
from support.fleet import fleet_names, seed_fleet
from support.runs import CANON, run_cli
from support.spine import journal

DOMAINS = 5


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[ReferenceHub]:
    """A reference hub with five small domains, d0000 ... d0004."""
    seed_fleet(tmp_path / "hub.sqlite3", DOMAINS)
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        yield hub


def _settings(tmp_path: Path, hub: ReferenceHub) -> Settings:
    flags = {"hub": hub.url, "llm": "offline", "memory": str(tmp_path / "memory"),
             "canon": str(CANON)}  # fmt: skip
    return load_settings(flags, {"PATH": "/usr/bin:/bin"}, tmp_path, domain_required=False)


def _loop(tmp_path: Path, hub: ReferenceHub, carry_out: Callable[[Settings], None] | None = None,
          **request: object) -> Watch:  # fmt: skip
    return Watch(_settings(tmp_path, hub), WatchRequest(**request), carry_out or (lambda s: None))  # type: ignore[arg-type]


def _pass(loop: Watch, hub: ReferenceHub) -> None:
    """One pass, and wait for the runs it started."""

    def read() -> StateSummary:
        return StateSummary.model_validate(httpx.get(hub.url + "/state/summary", timeout=5).json())

    with ThreadPoolExecutor(2) as pool:
        loop.pass_once(read, pool)
    loop.keep_seen()  # as the next pass, or the end of `serve`, does


def _runs(tmp_path: Path) -> dict[str, int]:
    """How many runs each domain's journal holds."""
    memory = tmp_path / "memory"
    names = [d for d in fleet_names(DOMAINS) if (memory / "journal" / f"{d}.jsonl").exists()]
    return {d: sum(r.kind == "run_started" for r in journal(memory, d)) for d in names}


def test_a_pass_runs_each_domain_once_then_only_the_one_that_moved(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    loop = _loop(tmp_path, fleet)
    _pass(loop, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    _pass(loop, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)  # nothing moved: no run
    said = {"workstream_id": "d0002-ws", "task_id": "d0002-t0", "event_type": "note",
            "summary": "Started on it.", "source": "ana"}  # fmt: skip
    httpx.post(f"{fleet.url}/events", json=said, timeout=5).raise_for_status()
    _pass(loop, fleet)
    assert _runs(tmp_path) == {**dict.fromkeys(fleet_names(DOMAINS), 1), "d0002": 2}
    assert loop.figures.summary_reads == 3 and loop.figures.started == DOMAINS + 1


def test_an_edit_to_any_canon_file_makes_every_domain_due_once(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    (canon / "adr").mkdir()
    (canon / "adr" / "freeze.md").write_text("# Freeze\n\n## Blocked work\n\nWait.\n", "utf-8")
    settings = replace(_settings(tmp_path, fleet), canon_dir=canon)
    loop = Watch(settings, WatchRequest(), lambda s: None)
    _pass(loop, fleet)
    _pass(loop, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    with (canon / "adr" / "freeze.md").open("a", encoding="utf-8") as edited:
        edited.write("Then flag it.\n")  # in place: the folder's stamp holds, the file's moves
    _pass(loop, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 2)
    _pass(loop, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 2)


def test_a_listed_domain_and_a_shard_are_all_a_pass_runs(
    tmp_path: Path, fleet: ReferenceHub, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = _loop(tmp_path, fleet, domains=("d0001", "d0003", "nope"))
    _pass(listed, fleet)
    _pass(listed, fleet)
    assert _runs(tmp_path) == {"d0001": 1, "d0003": 1}
    said = "watch: 1 listed domain(s) the hub does not list, not run: nope"
    assert capsys.readouterr().err.count(said) == 2  # each pass, not once
    assert listed.figures.unknown == 1 and listed.worst == 2  # `--once` would exit 2
    assert b"custodian_watch_unknown_domains 1.0" in listed.metrics_text()
    shard = parse_shard("1/2")
    _pass(_loop(tmp_path / "shard", fleet, shard=shard), fleet)
    ran = set(_runs(tmp_path / "shard"))
    assert ran == {d for d in fleet_names(DOMAINS) if shard_of(d, 2) == 1}


def test_a_failing_domain_does_not_stop_the_others(
    tmp_path: Path, fleet: ReferenceHub, capsys: pytest.CaptureFixture[str]
) -> None:
    journals = tmp_path / "memory" / "journal"
    journals.mkdir(parents=True)
    forged = '{"seq": 7, "kind": "forged"}\n{"x": 1}\n'
    (journals / "d0001.jsonl").write_text(forged, encoding="utf-8")

    def carry_out(settings: Settings) -> None:
        if settings.domain == "d0003":
            raise RuntimeError("a bug in one domain")

    loop = _loop(tmp_path, fleet, carry_out)
    _pass(loop, fleet)
    assert {d for d, n in _runs(tmp_path).items() if n} == {"d0000", "d0002", "d0004"}
    assert dict(loop.figures.finished) == {0: 3, 1: 1, 6: 1} and loop.worst == 6
    err = capsys.readouterr().err
    assert "watch: d0001: failed (exit 6): journal d0001.jsonl is damaged" in err
    assert "custodian: d0003: internal error (RuntimeError" in err
    assert list((tmp_path / "memory" / "crashes").iterdir())  # the traceback, saved as today
    _pass(loop, fleet)  # both are due again at the next pass; the others are not
    assert loop.figures.started == DOMAINS + 2


def test_metrics_parse_and_name_every_domain_and_the_loop(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    loop = _loop(tmp_path, fleet, every_s=0.2)
    with MetricsServer("127.0.0.1", 0, loop.metrics_text, loop.health) as server:
        worker = threading.Thread(target=loop.serve)
        worker.start()
        try:
            deadline = time.monotonic() + 30
            while loop.figures.passes < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            while sum(loop.figures.finished.values()) < DOMAINS and time.monotonic() < deadline:
                time.sleep(0.05)
            url = f"http://127.0.0.1:{server.port}"
            text = httpx.get(url + "/metrics", timeout=5).text
            health = httpx.get(url + "/healthz", timeout=5)
        finally:
            loop.stop.handler(15, None)
            worker.join(timeout=30)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    last_run = {
        s.labels["domain"] for s in families["custodian_last_run_timestamp_seconds"].samples
    }
    assert last_run == set(fleet_names(DOMAINS))
    assert families["custodian_watch_passes"].samples[0].value >= 2
    assert families["custodian_watch_overview_reads"].samples[0].value >= 2
    finished = families["custodian_watch_runs_finished"].samples
    assert {s.labels["exit_code"]: s.value for s in finished if s.name.endswith("_total")} == {
        "0": DOMAINS
    }
    assert health.status_code == 200 and health.text == "ok\n"


def test_health_fails_when_no_pass_came_for_a_few_intervals(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    loop = _loop(tmp_path, fleet, every_s=0.01)
    loop.figures.last_pass = time.time() - 120
    assert loop.health() is not None and "no pass for" in str(loop.health())


def test_a_shard_splits_a_list_completely_stably_and_by_sha256() -> None:
    names = fleet_names(1000)
    shards = [[n for n in names if parse_shard(f"{i}/4").includes(n)] for i in range(4)]
    assert sorted(n for s in shards for n in s) == names  # complete, and no name twice
    assert all(150 < len(s) < 350 for s in shards)
    backwards = [
        [n for n in reversed(names) if parse_shard(f"{i}/4").includes(n)] for i in range(4)
    ]
    assert [sorted(s) for s in backwards] == shards  # the order of the list does not matter
    expected = int.from_bytes(hashlib.sha256(b"d0042").digest()[:8], "big") % 7
    assert shard_of("d0042", 7) == expected


@pytest.mark.parametrize("text", ["4/4", "1", "-1/3", "a/b", "0/0"])
def test_a_bad_shard_says_the_form(text: str) -> None:
    from custodian_runtime.errors import ConfigError

    with pytest.raises(ConfigError, match="give I/N"):
        parse_shard(text)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--all-domains", "--shard", "4/4"], "--shard '4/4': give I/N"),
        (["--all-domains", "--every", "0"], "--every 0: give seconds above 0"),
        (["--all-domains", "--parallel", "0"], "--parallel 0: give 1 or more"),
        (["--domains", " , "], "--domains names no domain"),
    ],
)
def test_a_bad_watch_flag_is_a_usage_error_that_says_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: list[str], said: str
) -> None:
    from support.runs import run_cli

    argv = ["watch", *extra, "--hub", "http://127.0.0.1:9", "--llm", "offline"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 2 and said in result.stderr, result.stderr


def test_a_domain_is_due_for_each_kind_of_local_work_and_only_then() -> None:
    from datetime import UTC, datetime, timedelta

    from custodian_runtime.watch._due import Learned, due

    now = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    idle = Learned(revision=4, until=now + timedelta(hours=1), waiting=None, stamp=("j", 1))
    assert due(idle, 4, now, ("j", 1), decided=False) is None
    assert due(None, 4, now, ("j", 1), decided=False) == "not run since the watch started"
    assert due(idle, 5, now, ("j", 1), decided=False) == "revision 4 -> 5"
    assert due(idle, None, now, ("j", 1), decided=False) is not None  # a v1.1 hub: every pass
    later = now + timedelta(hours=2)
    assert due(idle, 4, later, ("j", 1), decided=False) == (
        "the skip window passed, or an approval expired"
    )
    assert due(idle, 4, now, ("j", 2), decided=False) == "its journal changed outside this watch"
    assert (
        due(idle, 4, now, ("j", 1), decided=True) == "a person's decision waits to be carried out"
    )
    waiting = Learned(4, None, "1 open write(s)", ("j", 1))
    assert due(waiting, 4, now, ("j", 1), decided=False) == "1 open write(s)"


def test_only_runs_appended_outside_the_watch_are_no_work_due() -> None:
    from custodian_runtime.watch._due import runs_only

    assert runs_only(["run_started", "observed", "note_written", "finished"])
    assert runs_only([])  # touched, nothing appended
    for word in ("policy_set", "grant_issued", "grant_revoked", "approval_decided"):
        assert not runs_only(["run_started", "finished", word]), word
    assert not runs_only(None)  # rotated, rewritten or unreadable: due


def test_a_run_by_someone_else_is_learned_not_run_again(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    from custodian_runtime.run import run

    loop = _loop(tmp_path, fleet)
    _pass(loop, fleet)
    settings = _settings(tmp_path, fleet)
    with (tmp_path / "stderr").open("a") as err:
        other = run(replace(settings, domain="d0004", force=True), stderr=err)
    assert other.exit_code == 0
    _pass(loop, fleet)  # its journal moved by a run alone: the watch learns what it left
    _pass(loop, fleet)
    assert _runs(tmp_path) == {**dict.fromkeys(fleet_names(DOMAINS), 1), "d0004": 2}
    journal_file = tmp_path / "memory" / "journal" / "d0004.jsonl"
    with journal_file.open("ab") as damaged:
        damaged.write(b"not a record\n")  # what it cannot read makes it due: the run says why
    _pass(loop, fleet)
    assert _runs(tmp_path)["d0004"] == 3


def test_two_watches_on_one_volume_do_not_wake_each_other_with_their_own_runs(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    one, two = _loop(tmp_path, fleet), _loop(tmp_path, fleet)
    _pass(one, fleet)
    _pass(two, fleet)  # what the first watch saw is kept on the volume: nothing runs again
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    for _ in range(3):  # nothing changed: another watch's run commit is no work due here
        _pass(one, fleet)
        _pass(two, fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    # A person's word journaled outside both (a mode set) is due, once, in each.
    with pytest.MonkeyPatch.context() as patch:
        done = run_cli(["policy", "set", "--domain", "d0001", "--operation", "flag_for_human",
                        "--mode", "ask", "--by", "ana", "--reason", "a look first",
                        "--memory", str(tmp_path / "memory")], tmp_path, patch)  # fmt: skip
    assert done.code == 0, done.stderr
    for _ in range(2):
        _pass(one, fleet)
        _pass(two, fleet)
    assert _runs(tmp_path) == {**dict.fromkeys(fleet_names(DOMAINS), 1), "d0001": 3}


def test_one_pool_serves_every_run_of_the_process_and_http_loads_no_tls(
    tmp_path: Path, fleet: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from custodian_runtime.net import transport
    from custodian_runtime.statehub import _http, connect

    made: list[str] = []

    def counted(url: str, proxy: str | None) -> httpx.HTTPTransport:
        made.append(url)
        return transport.hub_transport(url, proxy)

    monkeypatch.setattr(_http, "hub_transport", counted)
    monkeypatch.setattr(connect, "hub_transport", counted)
    loop = _loop(tmp_path, fleet, once=True)
    assert loop.serve() == 0
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    assert made == [fleet.url]  # one pool for the loop's reads and all five runs
    plain = transport.hub_transport("http://hub.example:8080", None)
    assert plain._pool._ssl_context.cert_store_stats()["x509_ca"] == 0  # no CA bundle read
    secure = transport.hub_transport("https://hub.example", None)
    assert secure._pool._ssl_context.cert_store_stats()["x509_ca"] > 0


PROMTOOL = shutil.which("promtool")


def test_a_quiet_domain_is_checked_every_pass_and_the_text_is_clean_for_promtool(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    loop = _loop(tmp_path, fleet)
    _pass(loop, fleet)
    first = _samples(loop.metrics_text())
    time.sleep(0.01)
    _pass(loop, fleet)  # nothing moved: no run, but every domain was looked at
    text = loop.metrics_text().decode()
    again = _samples(text)
    for name in fleet_names(DOMAINS):
        ran = ("custodian_last_run_timestamp_seconds", name)
        checked = ("custodian_last_check_timestamp_seconds", name)
        assert again[ran] == first[ran] and again[checked] > first[checked] >= first[ran]
    created = [k for k in again if k[0].endswith("_created")]
    assert created and all(again[k] == first[k] for k in created)  # the loop's start, kept
    assert PROMTOOL, "install promtool: apt-get install prometheus (.ci/run does)"
    checked_text = subprocess.run([PROMTOOL, "check", "metrics"], input=text, text=True,
                                  capture_output=True, timeout=60, check=False)  # fmt: skip
    assert checked_text.returncode == 0, checked_text.stdout + checked_text.stderr
    loop.keep_checks()  # as each minute and the end of `serve` do: `custodian status` reads them
    out, now = io.StringIO(), datetime.now(UTC)
    status_command(tmp_path / "memory", None, StatusRequest(timedelta(hours=48), True), out, now)
    shown = {d["domain"]: d for d in json.loads(out.getvalue())["domains"]}
    for name in fleet_names(DOMAINS):
        check, ran = (_parsed(shown[name][k]) for k in ("last_check_at", "last_run_at"))
        assert check == pytest.approx(again[("custodian_last_check_timestamp_seconds", name)])
        assert check > ran == pytest.approx(first[("custodian_last_run_timestamp_seconds", name)])


def _parsed(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def test_the_kept_text_is_what_prometheus_client_writes_for_the_same_figures(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    from custodian_runtime.metrics import all_figures, exposition

    loop = _loop(tmp_path, fleet)
    _pass(loop, fleet)
    settings = loop.settings
    figures = all_figures(settings.memory_dir, settings.seal_key, datetime.now(UTC))
    ours = {k: v for k, v in _samples(loop.metrics_text()).items()
            if not k[0].startswith("custodian_watch_")}  # fmt: skip
    theirs = _samples(exposition(figures))
    assert {k for k in ours if k[0] != LAST_CHECK} == {k for k in theirs if k[0] != LAST_CHECK}
    durations = [k for k in ours if k[0] == "custodian_run_duration_seconds"]
    assert len(durations) == DOMAINS


def _samples(text: str | bytes) -> dict[tuple[str, str], float]:
    """(sample name, its labels but the domain's, and the domain) -> value."""
    found = {}
    text = text.decode() if isinstance(text, bytes) else text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            rest = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if k != "domain")
            key = s.name if not rest else f"{s.name}{{{rest}}}"
            found[(key, s.labels.get("domain", ""))] = s.value
    return found


def test_what_was_seen_survives_a_restart_and_only_what_changed_runs(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    _pass(_loop(tmp_path, fleet), fleet)
    assert _runs(tmp_path) == dict.fromkeys(fleet_names(DOMAINS), 1)
    assert (tmp_path / "memory" / "watch" / "seen.json").is_file()
    said = {"workstream_id": "d0001-ws", "task_id": "d0001-t0", "event_type": "note",
            "summary": "Started on it.", "source": "ana"}  # fmt: skip
    httpx.post(f"{fleet.url}/events", json=said, timeout=5).raise_for_status()
    with (tmp_path / "memory" / "journal" / "d0003.jsonl").open("a") as touched:
        touched.write("")  # the same bytes: the stamp holds
    restarted = _loop(tmp_path, fleet)
    _pass(restarted, fleet)  # a new process: only the domain the hub moved runs
    assert _runs(tmp_path) == {**dict.fromkeys(fleet_names(DOMAINS), 1), "d0001": 2}
    assert restarted.figures.started == 1
    figures = _samples(restarted.metrics_text())  # after the restart: read back from disk
    for name in (LAST_CHECK, "custodian_last_success_timestamp_seconds", "custodian_run_exit_code"):
        assert {d for (n, d) in figures if n == name} == set(fleet_names(DOMAINS)), name


def test_what_was_seen_is_not_read_under_other_settings_or_when_damaged(
    tmp_path: Path, fleet: ReferenceHub
) -> None:
    _pass(_loop(tmp_path, fleet), fleet)
    other = _loop(tmp_path, fleet)
    limits = replace(other.settings.limits, max_events=19)
    other.settings = replace(other.settings, limits=limits)
    _pass(other, fleet)  # other settings: every domain is due once (a 304 each)
    assert other.figures.started == DOMAINS
    (tmp_path / "memory" / "watch" / "seen.json").write_text("{not json", encoding="utf-8")
    damaged = _loop(tmp_path, fleet)
    _pass(damaged, fleet)
    assert damaged.figures.started == DOMAINS


def test_a_pass_parses_the_counts_of_the_domains_that_moved_and_reuses_the_others(
    fleet: ReferenceHub,
) -> None:
    from custodian_runtime.core.context.overview import index_of
    from custodian_runtime.statehub import StateHubClient

    with StateHubClient(fleet.url) as client:
        first = client.state_summary_lazy()
        assert [d.domain for d in first.domains] == fleet_names(DOMAINS)
        known = index_of(first.whole()).by_name
        said = {"workstream_id": "d0002-ws", "task_id": "d0002-t0", "event_type": "note",
                "summary": "Started on it.", "source": "ana"}  # fmt: skip
        httpx.post(f"{fleet.url}/events", json=said, timeout=5).raise_for_status()
        again = client.state_summary_lazy().whole(known)
        whole = client.state_summary()
    assert again.domains == whole.domains  # the same summary a whole parse gives
    reused = {d.domain for d in again.domains if d is known[d.domain]}
    assert reused == set(fleet_names(DOMAINS)) - {"d0002"}
    assert again.domains[2].last_event_at is not None and known["d0002"].last_event_at is None


def test_a_skip_is_one_line_a_pass_one_line_and_the_configuration_is_said_once(
    tmp_path: Path, fleet: ReferenceHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _loop(tmp_path, fleet, once=True).serve() == 0
    capsys.readouterr()
    (tmp_path / "memory" / "watch" / "seen.json").unlink()  # every domain due: five 304s
    assert _loop(tmp_path, fleet, once=True).serve() == 0
    lines = capsys.readouterr().err.splitlines()
    assert len([ln for ln in lines if "started: hub" in ln]) == 1
    assert not [ln for ln in lines if ": hub: configured" in ln or ": model: selected" in ln]
    for name in fleet_names(DOMAINS):
        mine = [ln for ln in lines if ln.startswith(f"custodian: {name}: ")]
        assert len(mine) == 1 and "finish: skipped exit_code=0 reason=not modified" in mine[0]
    [passed] = [ln for ln in lines if "watch: pass 1:" in ln]
    assert "5 domain(s) looked at, 5 run(s) started" in passed
    assert lines[-1].endswith("since the last pass 5 ended (skipped 5)")
    assert len(lines) == 1 + 1 + DOMAINS + 1


def test_a_domains_file_of_any_size_is_read_and_an_unknown_name_fails_once(
    tmp_path: Path, fleet: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from custodian_runtime.errors import ConfigError
    from custodian_runtime.watch import read_domains
    from support.runs import run_cli

    listed = tmp_path / "domains.txt"
    many = [f"x{n:05}" for n in range(20_000)]  # 140 KiB: more than one env line may hold
    listed.write_text("# the fleet\n" + "\n".join(["d0001", "d0003, d0001", *many]) + "\n")
    assert read_domains(listed)[:3] == ("d0001", "d0003", "x00000")
    assert len(read_domains(listed)) == 2 + 20_000
    listed.write_text("d0001\nd0003\nnope\n", encoding="utf-8")
    argv = ["watch", "--domains-file", str(listed), "--once", "--hub", fleet.url, "--llm",
            "offline", "--memory", str(tmp_path / "memory"), "--canon", str(CANON)]  # fmt: skip
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 2, result.stderr  # not 0: a listed domain is unknown
    assert "1 listed domain(s) the hub does not list, not run: nope" in result.stderr
    assert _runs(tmp_path) == {"d0001": 1, "d0003": 1}
    (tmp_path / "empty.txt").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="names no domain"):
        read_domains(tmp_path / "empty.txt")
    with pytest.raises(ConfigError, match="cannot be read"):
        read_domains(tmp_path / "absent.txt")


def test_each_domain_is_pruned_at_its_minute_of_the_day_and_stays_not_due(
    tmp_path: Path, fleet: ReferenceHub, capsys: pytest.CaptureFixture[str]
) -> None:
    from datetime import timedelta

    from custodian_runtime.errors import ConfigError
    from custodian_runtime.journal.lock import RunLock
    from custodian_runtime.watch import parse_prune_keep
    from custodian_runtime.watch._prune import minute_of, turn_of, turns_between

    assert parse_prune_keep("90d") == timedelta(days=90)
    with pytest.raises(ConfigError, match="--prune-keep 7d"):
        parse_prune_keep("7d")  # shorter than the authority reads back
    assert turns_between(1430, 5, 2) and turns_between(1430, 5, 1435) and not turns_between(1, 5, 9)
    assert turn_of("d0001") == shard_of("d0001", 24 * 60)
    loop = _loop(tmp_path, fleet, prune_keep=timedelta(days=31))
    _pass(loop, fleet)  # every domain runs; the prune clock starts
    now = minute_of(datetime.now(UTC))
    loop._pruned_to = (now - 1) % (24 * 60)
    loop._prune_turns = dict.fromkeys(fleet_names(DOMAINS), now)  # every domain's turn: now
    capsys.readouterr()
    with RunLock(tmp_path / "memory", "d0004", run_id="held-by-a-test"):
        _pass(loop, fleet)
    err = capsys.readouterr().err
    assert "prune: d0004: not pruned" in err  # its lock was held: tried again tomorrow
    assert "prune: d0000" not in err  # nothing old enough: nothing said
    assert loop.figures.started == DOMAINS  # the prunes made no domain due
    _pass(loop, fleet)
    assert loop.figures.started == DOMAINS and not loop._in_flight
