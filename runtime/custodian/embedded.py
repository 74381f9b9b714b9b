"""The embedded default: the reference hub in-process, on loopback, seeded with demo data once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from custodian.core.redact import redact

if TYPE_CHECKING:
    from custodian.phase_log import PhaseLog
    from custodian.settings import Settings


@contextmanager
def embedded_hub(directory: Path, clock: Callable[[], datetime]) -> Iterator[str]:
    """Start the reference hub on an ephemeral loopback port; yield its URL; stop it after."""
    from custodian_hub import ReferenceHub, demo_dataset, load_seed

    directory.mkdir(parents=True, exist_ok=True)
    db_path = directory / "hub.sqlite3"
    if not db_path.exists():
        load_seed(db_path, demo_dataset(clock()))
    hub = ReferenceHub(db_path, host="127.0.0.1", port=0)
    hub.start()
    try:
        yield hub.url
    finally:
        hub.stop()


@contextmanager
def hub_url_for(settings: Settings, clock: Callable[[], datetime], log: PhaseLog) -> Iterator[str]:
    """The configured hub's URL, or the URL of an embedded hub started for the block."""
    assert settings.hub is not None
    if not settings.hub.embedded:
        log.line("hub", "configured", url=redact(settings.hub.url), source=settings.hub.source)
        yield settings.hub.url
        return
    with embedded_hub(settings.embedded_dir, clock) as url:
        log.line("hub", "embedded", url=url, db=str(settings.embedded_dir / "hub.sqlite3"))
        yield url
