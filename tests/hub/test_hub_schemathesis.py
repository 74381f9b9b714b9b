"""Schemathesis, with every check on, against the reference hub and its own /openapi.json.

The hub must answer what its document says: statuses, headers (`Allow` on every 405, `ETag` on
task answers), bodies, and which inputs it accepts or rejects. Run as the `st` command in a
subprocess, seeded and bounded, against a demo-seeded hub that requires a token.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import HUB_NOW
from custodian_hub import ReferenceHub, demo_dataset, load_seed
from support.paths import TESTS

TOKEN = "schemathesis-token"

# A schema cannot say that a task belongs to another workstream (422), that an idempotency key
# was used before with another body (422 idempotency_mismatch), or that a task has moved on
# (412), or that a domain is still at the revision If-None-Match names (304): for schema-valid
# input these are the contract's answers, not a rejection of the input.
# schemathesis_hooks.py adds the check that a schema-valid body never fails body validation.
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2XX", "304", "401", "404", "409", "412", "422"]
"""


def test_the_hub_matches_its_openapi_document_under_every_check(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, demo_dataset(HUB_NOW))
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG, encoding="utf-8")
    with ReferenceHub(db, token=TOKEN) as hub:
        argv = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run",
                f"{hub.url}/openapi.json", "--header", f"Authorization: Bearer {TOKEN}",
                "--checks", "all", "--max-examples", "20", "--seed", "1", "--no-color",
                "--generation-database", "none", "--request-timeout", "10"]  # fmt: skip
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "support.schemathesis_hooks",
            "PYTHONPATH": str(TESTS),
        }
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150, check=False
        )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    assert "Tested: 16" in report, report[-3000:]
    assert "failures" not in report.rsplit("SUMMARY", 1)[-1].lower(), report[-3000:]
