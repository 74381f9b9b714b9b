"""Who decides on the command line: `--by` where typed names are allowed, else the configured
identity (CUSTODIAN_DECIDER), else the OS user (core/approvals/decider.py)."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING

from custodian_runtime.errors import ConfigError

if TYPE_CHECKING:  # the parser imports this module for its help: the rest loads when used
    from custodian_runtime.core.approvals.decider import Decider
    from custodian_runtime.settings import Settings

BY_HELP = (
    "who decides, typed: any name with CUSTODIAN_TYPED_NAMES=1, else only the name the command "
    "decides as anyway (CUSTODIAN_DECIDER, else the OS user)"
)


def decider(settings: Settings, typed: str | None) -> Decider:
    """The person a command decides as, or a ConfigError saying what to set."""
    from custodian_runtime.core.approvals.decider import cli_decider

    try:
        os_user: str | None = getpass.getuser()
    except (KeyError, OSError):  # no such user in the passwd database, no USER/LOGNAME
        os_user = None
    people = settings.people
    found = cli_decider(typed, people.decider, os_user, typed_allowed=people.typed_names)
    if isinstance(found, str):
        raise ConfigError(found, setting="--by")
    return found
