"""`${NAME}` inside a config value, expanded from the environment as nanobot 0.3.5 expands it.

0.3.5 replaces every `${NAME}` (a letter or `_`, then letters, digits, `_`) in the config's strings with
that environment variable when it loads the config, refuses a config naming a variable that is not
set, and writes the file back with the references, never their values. The app does the same where
a value is used (the provider's API key, base URL and headers): the config it holds and saves keeps
`${NAME}`, so a key never lands in config.json because the app saved a setting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from nanobot_desktop.engine.config.errors import ConfigError

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env_refs(value: str, where: str | Callable[[], str], environ: Mapping[str, str] | None = None) -> str:
    """`value` with each `${NAME}` replaced; ConfigError naming the field (`where`, or what it returns:
    worked out only for an error) and the variable when it is unset."""
    if "${" not in value:
        return value
    env = os.environ if environ is None else environ
    missing = [name for name in dict.fromkeys(ENV_REF.findall(value)) if name not in env]
    if missing:
        where = where if isinstance(where, str) else where()
        names = ", ".join(missing)
        raise ConfigError(f"{where}: environment variable {names} is not set (the config says ${{{missing[0]}}}); "
                          "set it before starting, or put the value itself in the config")
    return ENV_REF.sub(lambda match: env[match.group(1)], value)


__all__ = ["ENV_REF", "expand_env_refs"]
