"""The embedded hub, wired in where the program is composed: the reference hub in this process.

The hub client (`statehub/`) does not know the reference hub; the CLI hands it over in the
settings, so that `--hub embedded` runs `custodian_hub` behind an httpx transport, seeded with
the demo data the first time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import httpx

from custodian_runtime.settings import Settings


def with_embedded_hub(settings: Settings) -> Settings:
    """The settings, with the reference hub wired in when the hub is `embedded`."""
    hub = settings.hub
    if hub is None or not hub.embedded:
        return settings
    return replace(settings, hub=replace(hub, open_embedded=embedded_hub))


@contextmanager
def embedded_hub(db_path: Path, clock: Callable[[], datetime]) -> Iterator[httpx.BaseTransport]:
    """The reference hub on `db_path` in this process, seeded with the demo data when new."""
    from custodian_hub import demo_dataset, in_process, load_seed

    db_path.parent.mkdir(parents=True, exist_ok=True)
    if not db_path.exists():
        load_seed(db_path, demo_dataset(clock()))
    with in_process(db_path) as transport:
        yield transport
