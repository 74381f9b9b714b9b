"""Which canon a command reads, `custodian init DIR`, and the packaged canon staying unwritten.

Flag, then CUSTODIAN_CANON_DIR, then ./canon when it exists, then the canon in the package.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.packaged import PACKAGED, default_canon, default_scenarios
from custodian_runtime.settings import load_settings
from support.runs import REPO, plan_response, run_cli, tree_digest

FLAGS = {"domain": "website", "hub": "embedded", "llm": "offline"}


def test_with_nothing_given_and_no_local_canon_the_packaged_canon_is_read(tmp_path: Path) -> None:
    settings = load_settings(FLAGS, {}, tmp_path)
    assert settings.canon_source == PACKAGED
    assert settings.canon_dir == default_canon()
    assert settings.canon_dir.resolve() == (REPO / "canon").resolve()  # in a checkout: the link


def test_a_local_canon_the_variable_and_the_flag_each_win_over_the_one_below(
    tmp_path: Path,
) -> None:
    (tmp_path / "canon").mkdir()
    local = load_settings(FLAGS, {}, tmp_path)
    assert (local.canon_dir, local.canon_source) == (tmp_path / "canon", "default")
    env = {"CUSTODIAN_CANON_DIR": "from-env"}
    from_env = load_settings(FLAGS, env, tmp_path)
    assert (from_env.canon_dir, from_env.canon_source) == (tmp_path / "from-env", *env)
    flagged = load_settings({**FLAGS, "canon": "mine"}, env, tmp_path)
    assert (flagged.canon_dir, flagged.canon_source) == (tmp_path / "mine", "flag")


def test_a_broken_local_canon_is_reported_not_replaced_by_the_packaged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "canon").symlink_to(tmp_path / "gone")
    argv = ["run", "--domain", "website", "--hub", "embedded", "--llm", "offline"]
    done = run_cli(argv, tmp_path, monkeypatch)
    assert done.code == 2
    assert f"no constitution at {tmp_path / 'gone' / 'constitution.md'}" in done.stderr
    assert not (tmp_path / ".custodian").exists()


def test_eval_scenarios_are_local_when_present_else_packaged(tmp_path: Path) -> None:
    packaged = default_scenarios(tmp_path)
    assert packaged.resolve() == (REPO / "evals" / "scenarios").resolve()
    (tmp_path / "evals" / "scenarios").mkdir(parents=True)
    assert default_scenarios(tmp_path) == tmp_path / "evals" / "scenarios"


def test_init_copies_the_canon_into_a_new_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_cli(["init", "copy/canon"], tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    target = tmp_path / "copy" / "canon"
    assert tree_digest(target) == tree_digest(REPO / "canon")
    assert f"copied the default canon to {target}: constitution.md, domains/" in done.stdout
    assert f"--canon {target}" in done.stdout
    assert "demo: custodian run --domain website --hub embedded" in done.stdout


def test_init_fills_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    done = run_cli(["init", "empty"], tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    assert (tmp_path / "empty" / "constitution.md").is_file()


@pytest.mark.parametrize("kind", ["a directory that is not empty", "a file"])
def test_init_refuses_a_target_that_holds_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    target = tmp_path / "target"
    if kind == "a file":
        target.write_text("mine\n", "utf-8")
    else:
        target.mkdir()
        (target / ".keep").write_text("", "utf-8")
    before = tree_digest(tmp_path)
    done = run_cli(["init", "target"], tmp_path, monkeypatch)
    assert done.code == 2
    assert f"{target} is {kind}; init never overwrites" in done.stderr
    assert "Traceback" not in done.stderr
    assert tree_digest(tmp_path) == before


def _packaged_digest() -> str:
    files = sorted(p for p in default_canon().rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def test_an_approved_canon_write_never_goes_into_the_packaged_canon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    proposal = {"path": "domains/website.md", "content": "# Replaced\n"}
    answer = tmp_path / "answer.md"
    plan = {"proposals": [{"operation": "write_canon", "rationale": "r", "params": proposal}]}
    answer.write_text(plan_response(plan), "utf-8")
    before = _packaged_digest()
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    queued = run_cli([*argv, "--json", "--force"], tmp_path, monkeypatch)
    assert queued.code == 0, queued.stderr
    assert "canon: packaged" in queued.stderr
    (item,) = queued.json()["queued"]
    approve = ["approvals", "approve", item["approval_id"], "--by", "ana", "--hub", small_hub.url]
    done = run_cli(approve, tmp_path, monkeypatch)
    assert done.code == 2
    assert "the packaged default, which is never changed" in done.stderr
    assert "custodian init DIR" in done.stderr
    assert _packaged_digest() == before
    listed = run_cli(["approvals", "list", "--status", "pending", "--json"], tmp_path, monkeypatch)
    assert [i["id"] for i in listed.json()] == [item["approval_id"]]
