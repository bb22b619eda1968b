"""The few settings the hook path needs, read without pydantic-settings.

A lifecycle hook runs on every session start and heartbeat of every agent, so
it cannot pay ~0.3 s to import pydantic-settings. This reader takes the same
sources in the same order (environment over `config.toml` over defaults) for
the handful of keys a hook uses; tests/server/test_quickconfig.py checks it
agrees with the full `Settings` so the two cannot drift.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass

from memverbs.server.errors import ConfigError
from memverbs.server.home import DEFAULT_BRAIN_NAME, DEFAULT_SOURCE, Home


@dataclass(frozen=True)
class QuickSettings:
    source: str
    brain_path: str
    brain_url: str
    busy_timeout_ms: int
    hook_entities: str


def lookup(data: dict, dotted: str):
    """The value at a dotted key (`mcp.strict_params`) of a TOML table, or None."""
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _value(data: dict, dotted: str, default):
    env = os.environ.get("MEMVERBS_" + dotted.upper().replace(".", "__"))
    if env is not None:
        return env
    found = lookup(data, dotted)
    return default if found is None else found


def quick_settings(home: Home) -> QuickSettings:
    try:
        with open(home.config_path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        data = {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {home.config_path} is unreadable ({exc})", "Run `memverbs doctor`.") from exc
    try:
        timeout = int(_value(data, "brain.busy_timeout_ms", 10_000))
    except (TypeError, ValueError) as exc:
        raise ConfigError("brain.busy_timeout_ms is not a number", "Run `memverbs doctor`.") from exc
    return QuickSettings(
        source=str(_value(data, "source", DEFAULT_SOURCE)).strip() or DEFAULT_SOURCE,
        brain_path=str(_value(data, "brain.path", DEFAULT_BRAIN_NAME)),
        brain_url=str(_value(data, "brain.url", "")),
        busy_timeout_ms=timeout,
        hook_entities=str(_value(data, "hooks.entities", "")),
    )
