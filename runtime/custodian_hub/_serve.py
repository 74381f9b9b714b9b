"""`custodian hub serve`: run the reference hub in the foreground until SIGINT or SIGTERM."""

from __future__ import annotations

import signal
import sys
import threading
from datetime import datetime
from pathlib import Path
from types import FrameType

from custodian_hub._ages import dated
from custodian_hub._demo import demo_dataset
from custodian_hub._seed import load_seed, read_seed_file
from custodian_hub._server import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.errors import ConfigError

# Relative to the working directory, next to the runtime's other local state.
DEFAULT_DB_PATH = Path(".custodian/hub.sqlite3")
DEFAULT_PORT = 8765


def seed_database(db: Path, seed: str, now: datetime) -> bool:
    """Load `demo` or a seed file into `db` when it is empty; True when something was loaded.

    A seed file may give ages instead of dates, as the packaged `demo.json` does."""
    dataset = demo_dataset(now) if seed == "demo" else dated(read_seed_file(Path(seed)), now)
    return load_seed(db, dataset)


def serve_command(host: str, port: int, db: Path, seed: str | None, token: str | None) -> int:
    """Serve the hub at host:port on `db` (seeded first if asked) until SIGINT/SIGTERM; 0 after."""
    hub = ReferenceHub(db, token=token, host=host, port=port)
    try:
        hub.bind()  # before the database: a busy port leaves no database behind
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port",
            setting="--port",
        ) from exc
    try:
        if seed is not None and seed_database(db, seed, utc_now()) is False:
            print(f"hub: {db} already has data; the seed was not loaded again", file=sys.stderr)
        hub.start()
    except BaseException:
        hub.stop()
        raise
    stop = threading.Event()
    previous = _install_handlers(stop)
    try:
        auth = "token required" if token else "no token"
        print(f"hub: serving {hub.url} (db {db}, {auth}); Ctrl-C stops", file=sys.stderr)
        sys.stderr.flush()
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        hub.stop()
        _restore_handlers(previous)
    print("hub: stopped", file=sys.stderr)
    return 0


SignalHandler = signal.Handlers | int | None | object


def _install_handlers(stop: threading.Event) -> dict[int, SignalHandler]:
    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: dict[int, SignalHandler] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous  # signals reach only the main thread; the caller stops us another way
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handle)
    return previous


def _restore_handlers(previous: dict[int, SignalHandler]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)  # type: ignore[arg-type]
