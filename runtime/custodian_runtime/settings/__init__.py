"""The one place that reads flags, the environment and .env; the seal keys and numbers in range."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.settings._load import (
        DEFAULT_EMBEDDED_DIR,
        EMBEDDED,
        HUB_PROXY,
        EmbeddedHub,
        HubSettings,
        Settings,
        claude_on_path,
        hub_proxy,
        load_settings,
        model_config,
        parse_domain,
        parse_hub,
        pick,
    )
    from custodian_runtime.settings.dotenv import early_log_format, layered_environment, read_dotenv
    from custodian_runtime.settings.numbers import env_float, env_int, limits_from
    from custodian_runtime.settings.seal_keys import (
        SEAL_KEY,
        SEAL_KEY_PREVIOUS,
        SEAL_VARIABLES,
        seal_key_from,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
