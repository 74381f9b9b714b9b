"""A real Redmine on 127.0.0.1 for the tests, one per session (Debian's `redmine` package).

Debian's package (`scripts/system_packages.sh redmine`) migrates a SQLite database and loads
Redmine's default data when it is installed; each session serves a copy of that database, so no
test pays for `db:migrate`. In the copy the REST API is turned on, the admin user keeps its
password and gets a known API key. The server is Rails' WEBrick, which Debian's Gemfile does not
list: a Gemfile of the session's own adds it to Redmine's.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.servers import free_port, serving

REDMINE = Path("/usr/share/redmine")
# The database Debian's package made when it was installed (dbconfig-common, SQLite).
INSTALLED_DB = Path("/var/lib/dbconfig-common/sqlite3/redmine/instances/default/redmine_default")
API_KEY = "c0ffee" + "0" * 34  # the admin's API key in the session's copy
INSTALL = "scripts/system_packages.sh redmine (as root)"


@dataclass(frozen=True)
class Redmine:
    """A running Redmine: its web URL, the admin's API key, and its database file."""

    web: str
    key: str
    db: Path

    @property
    def hub_url(self) -> str:
        """Redmine as a hub URL: the backend, the API key and Redmine's address."""
        scheme, rest = self.web.split("://", 1)
        return f"redmine+{scheme}://{self.key}@{rest}"


def make_database(db: Path, env: dict[str, str], installed: Path = INSTALLED_DB) -> None:
    """A copy of the installed database (or, where the package made none, one migrated here)
    with REST on and the admin's API key known."""
    if installed.is_file():
        shutil.copy(installed, db)
    else:  # dbconfig-common made no SQLite database: Redmine's own tasks make one (about 25 s)
        for task in (["db:migrate"], ["redmine:load_default_data"]):
            done = subprocess.run(
                ["bin/rake", *task], cwd=REDMINE, env={**env, "REDMINE_LANG": "en"},
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                pytest.fail(f"rake {task[0]} failed: {done.stderr[-2000:]}; install with {INSTALL}")
    with sqlite3.connect(db) as con:
        con.execute("UPDATE users SET must_change_passwd = 0 WHERE login = 'admin'")
        con.execute(
            "INSERT INTO settings (name, value, updated_on) "
            "VALUES ('rest_api_enabled', '1', datetime('now'))"
        )
        con.execute(
            "INSERT INTO tokens (user_id, action, value, created_on, updated_on) "
            "SELECT id, 'api', ?, datetime('now'), datetime('now') FROM users "
            "WHERE login = 'admin'",
            (API_KEY,),
        )
        make_schema(con)
    con.close()


KINDS = ("Workstream", "Task", "Flag", "Decision")
TEXT_FORMAT = "---\ntext_formatting: ''\nfull_width_layout: '0'\n"


def make_schema(con: sqlite3.Connection) -> None:
    """What docs/trackers.md asks an admin to make: four trackers with Bug's workflow (and any
    status for a new issue, for the Manager role), and the
    `Custodian` long-text issue custom field (for every project, a filter) on them."""
    bug = con.execute("SELECT id FROM trackers WHERE name = 'Bug'").fetchone()[0]
    field = con.execute(
        "INSERT INTO custom_fields (type, name, field_format, is_for_all, is_filter, position, "
        "searchable, editable, visible, multiple, format_store, description, is_required, "
        "possible_values, regexp, default_value) VALUES ('IssueCustomField', 'Custodian', "
        "'text', 1, 1, 1, 0, 1, 1, 0, ?, '', 0, NULL, '', '')",
        (TEXT_FORMAT,),
    ).lastrowid
    for position, name in enumerate(KINDS, start=10):
        tracker = con.execute(
            "INSERT INTO trackers (name, position, is_in_roadmap, fields_bits, default_status_id) "
            "VALUES (?, ?, 0, 0, 1)",
            (name, position),
        ).lastrowid
        con.execute(
            "INSERT INTO workflows (tracker_id, old_status_id, new_status_id, role_id, assignee, "
            "author, type, field_name, rule) SELECT ?, old_status_id, new_status_id, role_id, "
            "assignee, author, type, field_name, rule FROM workflows WHERE tracker_id = ?",
            (tracker, bug),
        )
        con.execute(  # a new issue may start in any status ("New issue" in the workflow)
            "INSERT INTO workflows (tracker_id, old_status_id, new_status_id, role_id, assignee, "
            "author, type) SELECT ?, 0, id, 3, 0, 0, 'WorkflowTransition' FROM issue_statuses",
            (tracker,),
        )
        con.execute("INSERT INTO custom_fields_trackers VALUES (?, ?)", (field, tracker))


@contextmanager
def redmine_server(root: Path) -> Iterator[Redmine]:
    """Redmine serving a fresh copy of the installed database under `root` until the block ends."""
    if not (REDMINE / "config.ru").is_file():
        pytest.fail(f"Redmine is not installed: install it with {INSTALL}")
    db = root / "redmine.sqlite3"
    gemfile = root / "Gemfile"
    gemfile.write_text(f'eval_gemfile "{REDMINE}/Gemfile"\ngem "webrick"\n', encoding="utf-8")
    port = free_port()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(root),
        "RAILS_ENV": "production",
        "BUNDLE_GEMFILE": str(gemfile),
        "DATABASE_URL": f"sqlite3:{db}",
    }
    make_database(db, env)
    argv = ["bin/rails", "server", "-u", "webrick", "-b", "127.0.0.1", "-p", str(port)]
    argv += ["-P", str(root / "server.pid")]
    with serving("redmine", argv, port, root / "redmine.log", 90.0, 0.1, cwd=REDMINE, env=env):
        yield Redmine(f"http://127.0.0.1:{port}", API_KEY, db)


@pytest.fixture(scope="session")
def redmine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redmine]:
    """One Redmine for the session: each test works in a project of its own."""
    with redmine_server(tmp_path_factory.mktemp("redmine")) as running:
        yield running
