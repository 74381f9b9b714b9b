"""The reference state-hub: contract v1.2 of the state-hub API over SQLite, for runs and tests.

It is not part of Custodian's runtime path: the runtime talks to any hub
through `custodian_runtime.statehub`, and reaches this one only when asked for
`embedded` (or when a person runs `custodian hub serve`).

- `ReferenceHub`: the hub over real HTTP on a loopback port, on a daemon thread.
- `in_process`, `HubTransport`: the hub in the caller's process behind an httpx transport (no
  socket, no thread): the embedded default.
- `load_seed`, `read_seed_file`, `validate_seed`, `SeedError`: datasets into an empty database.
- `demo_dataset`, `DEMO_DOMAINS`: the `--seed demo` data, dated relative to a given moment.
- `serve_command`, `seed_database`, `DEFAULT_DB_PATH`: `custodian hub serve`.
- `Endpoint`, `register_endpoint`: the hub's one table of endpoints, and a new one served while a
  context lasts (a test's new operation with its own endpoint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_hub._app import Clock, WriteHook
    from custodian_hub._demo import DEMO_DOMAINS, demo_dataset
    from custodian_hub._endpoints import register_endpoint
    from custodian_hub._routes import Endpoint
    from custodian_hub._seed import SeedError, load_seed, read_seed_file, validate_seed
    from custodian_hub._serve import DEFAULT_DB_PATH, DEFAULT_PORT, seed_database, serve_command
    from custodian_hub._server import ReferenceHub
    from custodian_hub._transport import HubTransport, in_process

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
