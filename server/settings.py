"""Settings: environment (`MEMVERBS_*`, nested keys with `__`) over `$MEMVERBS_HOME/config.toml`.

Built explicitly and passed down (no module-level cache): `load_settings(home)`.
Dotted names (`mcp.strict_params`) address the nested tables, the same way the
config file and `memverbs config get/set` spell them.
"""

from __future__ import annotations

import tomllib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from memverbs.server.errors import ConfigError
from memverbs.server.home import Home
from memverbs.server.quickconfig import DEFAULTS

Surface = Literal["verbs", "starter", "full"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BrainSettings(_Section):
    backend: Literal["sqlite"] = Field("sqlite", description="Kept for older config files: the backend follows brain.url.")
    path: str = Field(DEFAULTS["brain.path"], description="SQLite brain file, relative to the home.")
    url: str = Field(
        DEFAULTS["brain.url"],
        description="Where the brain lives: empty for the file brain.path, sqlite:///file.db, or postgresql://user@host/db.",
    )
    pool_size: int = Field(DEFAULTS["brain.pool_size"], ge=1, le=100, description="Postgres: most connections one process opens to the brain.")
    busy_timeout_ms: int = Field(DEFAULTS["brain.busy_timeout_ms"], ge=0, description="How long a writer waits for another's lock.")


class McpSettings(_Section):
    strict_params: Literal["warn", "reject"] = Field(
        DEFAULTS["mcp.strict_params"], description="Unknown tool params: warn (accept, with a warning) or reject (invalid_params)."
    )


class SearchSettings(_Section):
    remote_private_pages: bool = Field(
        DEFAULTS["search.remote_private_pages"], description="Let untrusted (MCP) callers see private pages. Off: fail closed."
    )
    evidence_cosine_floor: float = Field(
        0.8, ge=0.0, le=1.0, description="Query-to-chunk cosine at or above which a result is high_vector_match."
    )


class EmbeddingsSettings(_Section):
    """An OpenAI-compatible /embeddings endpoint. The API key never lives here (env or keyring)."""

    provider: Literal["openai", "local"] = Field(
        "openai",
        description="Embedding API: openai (any OpenAI-compatible /v1/embeddings server), or local (a model run on "
        "this CPU, shipped by the memverbs[local] extra, embeddings.model = wordllama/l2_supercat, or by "
        "memverbs[local-minilm], embeddings.model = minilm/all-MiniLM-L6-v2).",
    )
    base_url: str = Field(
        "", description="API base URL, e.g. http://localhost:11434/v1 for Ollama; empty: https://api.openai.com/v1."
    )
    model: str = Field("", description="Embedding model id; empty: no embedding provider (keyword-only search).")
    dimensions: int = Field(0, ge=0, description="Ask the model for this many dimensions; 0: the model's native size.")
    batch_size: int = Field(64, ge=1, le=2048, description="Texts per embeddings request (reindex, page writes).")
    timeout_seconds: int = Field(15, ge=1, description="Per-request timeout for embedding calls.")


class LlmSettings(_Section):
    """The chat model synthesize composes with. The API key never lives here (env or keyring)."""

    provider: Literal["anthropic", "openai"] = Field(
        "anthropic", description="Chat API: anthropic (Messages API) or openai (any OpenAI-compatible chat completions)."
    )
    base_url: str = Field(
        "", description="API base URL; empty: https://api.anthropic.com or https://api.openai.com/v1 by provider."
    )
    model: str = Field("", description="Chat model id; empty: no LLM (synthesize answers unavailable).")
    max_tokens: int = Field(1500, ge=16, description="Upper bound on the tokens one synthesize answer may use.")
    timeout_seconds: int = Field(60, ge=1, description="Per-request timeout for chat calls.")
    price_input_per_mtok: float | None = Field(
        None, ge=0, description="USD per million input tokens for llm.model; unset: the built-in price table."
    )
    price_output_per_mtok: float | None = Field(
        None, ge=0, description="USD per million output tokens for llm.model; unset: the built-in price table."
    )


class HookSettings(_Section):
    entities: str = Field(DEFAULTS["hooks.entities"], description="Standing entities for session-start packs, comma-separated.")
    user: str = Field(DEFAULTS["hooks.user"], description="The user's own entity, in every session-start pack after the project's (empty: none).")
    reflex: bool = Field(DEFAULTS["hooks.reflex"], description="On every prompt, point the agent to what memory holds on the entities the prompt names (`memverbs docs hooks`; MEMVERBS_REFLEX=off turns it off too).")


class CaptureSettings(_Section):
    """Automatic capture at a session's end (docs/capture.md)."""

    enabled: bool = Field(True, description="Capture sessions at their end and before a compaction (the hooks and `memverbs capture`).")
    exclude_projects: str = Field(
        "", description="Projects never captured, comma-separated: a project name, its projects/<name> slug, its remote, or a directory."
    )
    user_entity: str = Field(
        "people/me", description="Where facts from a session outside any project are filed (a project's go under projects/<name>)."
    )
    max_facts: int = Field(10, ge=0, le=100, description="At most this many facts kept from one session.")
    visibility: Literal["default", "private"] = Field(
        "default", description="Captured facts: default (the brain's default visibility, world) or private."
    )
    session_page: Literal["private", "world", "off"] = Field(
        "private", description="The session page (sessions/<date>-<harness>-<id>): private, world, or off (no page)."
    )
    llm: bool = Field(
        False, description="Also let the chat model (llm.*) propose facts from each session, redacted first, within the caps below; off: zero LLM."
    )
    llm_max_usd: float = Field(
        0.05, ge=0, description="The LLM pass's spend per session, in USD at llm.model's price (a model without a known price: tokens alone)."
    )
    llm_max_tokens: int = Field(
        20_000, ge=0, description="The LLM pass's tokens per session, input and output, over all of the session's captures."
    )


class HttpSettings(_Section):
    allowed_hosts: str = Field(
        "", description="Host header values `serve --http` accepts besides loopback, comma-separated (a reverse proxy's name)."
    )
    allowed_origins: str = Field(
        "", description="Origin header values `serve --http` accepts besides loopback, comma-separated."
    )


class OAuthSettings(_Section):
    """The authorization server inside `serve --http` (claude.ai, ChatGPT and other connectors)."""

    enabled: bool = Field(True, description="Serve OAuth 2.1 beside the static tokens (metadata, consent, tokens).")
    public_url: str = Field(
        "", description="The /mcp URL clients connect to, e.g. https://brain.example.com/mcp: the tokens' audience; "
                        "empty: the address serve --http listens on."
    )
    registration: Literal["known", "any", "off"] = Field(
        "known", description="Dynamic client registration: known (loopback and the known connector callbacks, plus "
                             "oauth.redirect_uris), any (every https callback), off."
    )
    redirect_uris: str = Field(
        "", description="More callback URLs a client may register with oauth.registration = known, comma-separated."
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMVERBS_", env_nested_delimiter="__", extra="forbid")

    source: str = Field(DEFAULTS["source"], description="Source (namespace) every read and write belongs to.")
    mcp_surface: Surface | None = Field(DEFAULTS["mcp_surface"], description="Default MCP surface: verbs, starter or full.")
    protocol_installed_at: str | None = Field(None, description="When `memverbs init` ran (for protocol stats).")
    cli_remote: bool = Field(
        False, description="The CLI's memory and page commands talk to the remote brain `memverbs connect` set up (as `memverbs --remote` does)."
    )
    brain: BrainSettings = BrainSettings()
    mcp: McpSettings = McpSettings()
    search: SearchSettings = SearchSettings()
    hooks: HookSettings = HookSettings()
    capture: CaptureSettings = CaptureSettings()
    http: HttpSettings = HttpSettings()
    oauth: OAuthSettings = OAuthSettings()
    embeddings: EmbeddingsSettings = EmbeddingsSettings()
    llm: LlmSettings = LlmSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The file's path is bound per home by load_settings (model_config["toml_file"]).
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls)


def load_settings(home: Home) -> Settings:
    """Settings for this home; raises ConfigError with the fix when the file or a value is bad."""
    path = home.config_path

    class HomeSettings(Settings):
        model_config = SettingsConfigDict(toml_file=path)

    try:
        return HomeSettings()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML ({exc})",
            f"Fix the syntax in {path}, or move it aside and run `memverbs init` to write a fresh one.",
        ) from exc
    except ValidationError as exc:
        raise ConfigError(
            f"config has invalid values: {describe(exc)}",
            f"Correct them in {path} or the MEMVERBS_* environment (see `memverbs config get`).",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}", f"Check the permissions of {path}.") from exc


def describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def known_keys() -> dict[str, str]:
    """Every dotted setting name with its description, for `config` and the docs test."""
    out: dict[str, str] = {}
    for name, info in Settings.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            for sub, sub_info in ann.model_fields.items():
                out[f"{name}.{sub}"] = sub_info.description or ""
        else:
            out[name] = info.description or ""
    return out


class FileSettings(Settings):
    """The config file's values alone (no environment): what `config set` validates before writing."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def setting_type(key: str) -> type | None:
    """The Python type a dotted setting holds (str, int, bool, float), for typing CLI input."""
    node: type[BaseModel] = Settings
    info = None
    for part in key.split("."):
        info = node.model_fields.get(part)
        if info is None:
            return None
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            node = info.annotation
    ann = info.annotation if info is not None else None
    if ann == float | None:
        return float
    plain: dict[object, type] = {str: str, int: int, bool: bool, float: float}
    return plain.get(ann, str)
