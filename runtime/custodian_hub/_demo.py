"""The `--seed demo` dataset: two domains, `website` and `platform`, dated relative to `now`.

The records live in `demo.json` with ages instead of dates (`*_days_ago`, `hours_ago`,
`due_in_days`; `custodian_hub._ages` reads them, for any seed file). They are written to exercise
a custodian: in-progress tasks nobody has touched for weeks, blocked tasks with no flag, tasks
whose latest events say they are finished while their status is not `done`, open decisions and
flags, and text that tries to give a model instructions.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from importlib import resources
from typing import Any

from custodian_hub._ages import KINDS, dated

DEMO_DOMAINS: tuple[str, ...] = ("website", "platform")


@functools.cache
def _template_text() -> str:
    return resources.files("custodian_hub").joinpath("demo.json").read_text("utf-8")


def demo_dataset(now: datetime) -> dict[str, Any]:
    """The demo data in the JSON shape of a seed file, every date relative to `now` (UTC)."""
    template = dated(json.loads(_template_text()), now)
    return {key: template[key] for key in KINDS}
