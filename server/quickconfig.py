"""The few settings the hook path and the stdio server's first answer need, read without pydantic-settings.

A lifecycle hook runs on every session start and heartbeat of every agent, and
a harness waits on the stdio server's first answers, so neither can pay ~0.3 s
to import pydantic-settings. This reader takes the same
sources in the same order (environment over `config.toml` over defaults) for
the handful of keys a hook uses; tests/server/test_quickconfig.py checks it
agrees with the full `Settings` so the two cannot drift, and both take their
defaults from `DEFAULTS` here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import MappingProxyType

from memverbs.server.errors import ConfigError
from memverbs.server.home import DEFAULT_BRAIN_NAME, DEFAULT_SOURCE, Home
from memverbs.server.record import Frozen

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import Any

SURFACES = ("verbs", "starter", "full")  # the MCP surfaces, narrowest first (protocol/surfaces.py says what each lists)
STRICT_PARAMS = ("warn", "reject")

# The defaults of the settings this reader knows, by dotted name: settings.py's fields take
# theirs from here too, so the fast reader and the full one cannot disagree on a default.
DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "source": DEFAULT_SOURCE,
    "mcp_surface": None,
    "brain.path": DEFAULT_BRAIN_NAME,
    "brain.url": "",
    "brain.pool_size": 4,
    "brain.busy_timeout_ms": 10_000,
    "mcp.strict_params": "warn",
    "search.remote_private_pages": False,
    "hooks.entities": "",
    "hooks.user": "people/me",
    "cli_remote": False,
    "embeddings.model": "",
    "llm.model": "",
    "hooks.reflex": True,
})


class QuickSettings(Frozen):
    __slots__ = (
        "brain_path",
        "brain_url",
        "busy_timeout_ms",
        "cli_remote",
        "embeddings_model",
        "hook_entities",
        "hook_reflex",
        "hook_user",
        "llm_model",
        "mcp_surface",
        "pool_size",
        "remote_private_pages",
        "source",
        "strict_params",
        "sure",
    )
    source: str
    brain_path: str
    brain_url: str
    busy_timeout_ms: int
    hook_entities: str
    hook_user: str
    hook_reflex: str  # as written ("true", "off", …): hooks/fastpath.reflex_on reads it
    pool_size: int
    mcp_surface: str | None
    strict_params: str
    remote_private_pages: bool
    cli_remote: bool
    embeddings_model: str  # empty: no embedding provider, known without the full settings
    llm_model: str  # empty: no chat model
    sure: bool  # False: a value this reader cannot vouch for; ask the full settings

    def __init__(self, source: str, brain_path: str, brain_url: str, busy_timeout_ms: int, hook_entities: str,
                 pool_size: int = DEFAULTS["brain.pool_size"], mcp_surface: str | None = None,
                 strict_params: str = DEFAULTS["mcp.strict_params"],
                 remote_private_pages: bool = DEFAULTS["search.remote_private_pages"], sure: bool = True,
                 hook_user: str = DEFAULTS["hooks.user"], hook_reflex: str = "true", cli_remote: bool = DEFAULTS["cli_remote"],
                 embeddings_model: str = DEFAULTS["embeddings.model"], llm_model: str = DEFAULTS["llm.model"]) -> None:
        super().__init__(source=source, brain_path=brain_path, brain_url=brain_url, busy_timeout_ms=busy_timeout_ms,
                         hook_entities=hook_entities, hook_user=hook_user, hook_reflex=hook_reflex, pool_size=pool_size,
                         mcp_surface=mcp_surface, strict_params=strict_params, remote_private_pages=remote_private_pages,
                         sure=sure, cli_remote=cli_remote, embeddings_model=embeddings_model, llm_model=llm_model)


def lookup(data: dict, dotted: str) -> Any:
    """The value at a dotted key (`mcp.strict_params`) of a TOML table, or None."""
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _value(data: dict[str, Any], dotted: str) -> Any:
    default = DEFAULTS[dotted]
    env = os.environ.get("MEMVERBS_" + dotted.upper().replace(".", "__"))
    if env is not None:
        return env
    found = lookup(data, dotted)
    return default if found is None else found


def _parse(home: Home) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415 - the hooks read a parsed copy instead (hooks/fastpath.py config_tables)

    try:
        with open(home.config_path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}


def quick_settings(home: Home, tables: Callable[[], dict[str, Any]] | None = None) -> QuickSettings:
    """`tables`: what reads config.toml's tables (default: parse the file); the hooks pass their
    parsed-once copy. A file that cannot be read or parsed is a ConfigError either way."""
    try:
        data = tables() if tables is not None else _parse(home)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"config file {home.config_path} is unreadable ({exc})", "Run `memverbs doctor`.") from exc
    try:
        timeout = int(_value(data, "brain.busy_timeout_ms"))
        pool_size = int(_value(data, "brain.pool_size"))
    except (TypeError, ValueError) as exc:
        raise ConfigError("brain.busy_timeout_ms or brain.pool_size is not a number", "Run `memverbs doctor`.") from exc
    surface = _value(data, "mcp_surface")
    strict = _value(data, "mcp.strict_params")
    private = _flag(_value(data, "search.remote_private_pages"))
    remote = _flag(_value(data, "cli_remote"))
    models = [_value(data, "embeddings.model"), _value(data, "llm.model")]
    sure = ((surface is None or surface in SURFACES) and strict in STRICT_PARAMS and isinstance(private, bool)
            and isinstance(remote, bool) and all(isinstance(m, str) for m in models)
            # A whole section given as JSON in one variable is the full reader's to read.
            and not any(f"MEMVERBS_{section}" in os.environ for section in ("EMBEDDINGS", "LLM", "BRAIN", "SEARCH", "MCP")))
    return QuickSettings(
        source=str(_value(data, "source")).strip() or DEFAULT_SOURCE,
        brain_path=str(_value(data, "brain.path")),
        brain_url=str(_value(data, "brain.url")),
        busy_timeout_ms=timeout,
        hook_entities=str(_value(data, "hooks.entities")),
        hook_user=str(_value(data, "hooks.user")),
        hook_reflex=str(_value(data, "hooks.reflex")),
        pool_size=pool_size,
        mcp_surface=surface if sure else None,
        strict_params=strict if sure else "warn",
        remote_private_pages=private if sure else False,
        sure=sure,
        cli_remote=remote if sure else False,
        embeddings_model=str(models[0]) if sure else "",
        llm_model=str(models[1]) if sure else "",
    )


_FLAGS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _flag(value: Any) -> Any:
    """A boolean setting as the environment or the file gives it; anything else as it is (not sure)."""
    return _FLAGS.get(value.strip().lower(), value) if isinstance(value, str) else value
