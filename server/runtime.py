"""Runtime: one home's settings and brain, opened once per process and handed out.

A broken config or a missing brain does not stop a server from starting: the
failure is kept and every call answers `unavailable` with its fix, so a harness
shows the user the fix instead of a dead tool list. A later `memverbs init`
heals a running server without a restart (the open is retried per call).

`Runtime.quick()` is the stdio server's: it starts from quickconfig.py's
reading of the few keys a tool call needs, so the first answer does not wait
for pydantic-settings (~0.3 s); the full settings load when something needs
them (a provider) or when `validate_settings` runs after the first answer, and
a config they refuse then makes every later call answer `unavailable`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from memverbs.server import usage
from memverbs.server.brain import waits
from memverbs.server.brain.base import Brain
from memverbs.server.brain.factory import locate, open_brain
from memverbs.server.brain.location import BrainLocation
from memverbs.server.context import LOCAL_LANE, Caller
from memverbs.server.dispatch import Dispatcher
from memverbs.server.errors import ConfigError
from memverbs.server.home import Home, source_from_env
from memverbs.server.protocol.surfaces import DEFAULT_SURFACE, SURFACES, narrower
from memverbs.server.providers.config import Providers
from memverbs.server.quickconfig import DEFAULTS, QuickSettings, quick_settings

if TYPE_CHECKING:
    from memverbs.server.projects import Project
    from memverbs.server.settings import Settings

T = TypeVar("T")


class Runtime:
    def __init__(self, home: Home | None = None, providers: Providers | None = None, *, lazy: bool = False) -> None:
        self.home = home or Home.from_env()
        self.config_error: ConfigError | None = None
        self._settings: Settings | None = None
        self._loaded = False
        self._quick: QuickSettings | None = None
        if lazy:
            try:
                self._quick = quick_settings(self.home)
            except ConfigError as exc:
                self.config_error = exc
        if self._quick is None or not self._quick.sure:
            self.validate_settings()
        self._brain: Brain | None = None
        # A long-lived process (a server) builds a big brain's vector graph in the background.
        self.build_graphs = False
        # Threads that serve calls at once: a Postgres pool is never smaller, so no call waits for
        # a connection (each holds one at a time). `serve --http` raises it to its worker count.
        self.workers = 1
        # Costs nothing to build: keys, httpx and numpy wait for the first call that needs them.
        self.providers = providers or Providers(None, load=lambda: self.settings, models=self._quick_models)

    @classmethod
    def quick(cls, home: Home | None = None) -> Runtime:
        """A runtime whose full settings wait until needed (the stdio server's)."""
        return cls(home, lazy=True)

    def _quick_models(self) -> tuple[str, str] | None:
        """(embeddings.model, llm.model) from the quick reading, while the full settings are not loaded."""
        if self._loaded or self._quick is None:
            return None
        return self._quick.embeddings_model, self._quick.llm_model

    @property
    def settings(self) -> Settings | None:
        if not self._loaded:
            self.validate_settings()
        return self._settings

    def validate_settings(self) -> None:
        """Load the full settings now; a config they refuse becomes the config error every call reports."""
        if self._loaded:
            return
        from memverbs.server.settings import load_settings  # noqa: PLC0415 - pydantic-settings: ~0.3 s

        try:
            self._settings = load_settings(self.home)
        except ConfigError as exc:
            self.config_error = exc  # the full reading words it best
        self._loaded = True

    def _pick(self, full: Callable[[Settings], T], quick: Callable[[QuickSettings], T], default: T) -> T:
        """A setting from the full settings once loaded, else from the quick reading, else its default."""
        if self._loaded:
            return full(self._settings) if self._settings is not None else default
        return quick(self._quick) if self._quick is not None else default

    @property
    def source(self) -> str:
        return self._pick(lambda s: s.source, lambda q: q.source, None) or source_from_env()

    @property
    def brain_location(self) -> BrainLocation:
        """The configured brain (`brain.url`, else the file `brain.path`); raises ConfigError for a bad URL."""
        url = self._pick(lambda s: s.brain.url, lambda q: q.brain_url, DEFAULTS["brain.url"])
        return locate(url, self.home, self._pick(lambda s: s.brain.path, lambda q: q.brain_path, DEFAULTS["brain.path"]))

    @property
    def busy_timeout_ms(self) -> int:
        return self._pick(lambda s: s.brain.busy_timeout_ms, lambda q: q.busy_timeout_ms, DEFAULTS["brain.busy_timeout_ms"])

    @property
    def pool_size(self) -> int:
        configured = self._pick(lambda s: s.brain.pool_size, lambda q: q.pool_size, DEFAULTS["brain.pool_size"])
        return max(configured, self.workers)

    def _open(self, *, create: bool = False) -> Brain:
        if self.config_error is not None:
            raise self.config_error
        return open_brain(self.brain_location, create=create, busy_timeout_ms=self.busy_timeout_ms,
                          pool_size=self.pool_size, build_graphs=self.build_graphs)

    def brain(self) -> Brain:
        if self.config_error is not None:
            raise self.config_error  # also after the brain was opened: a config refused late fails closed
        if self._brain is None:
            self._brain = self._open()
        return self._brain

    def open_brain(self) -> Brain:
        """A fresh connection to the brain, not shared: one per worker thread of the HTTP server."""
        return self._open()

    def create_brain(self) -> Brain:
        self._brain = self._open(create=True)
        return self._brain

    def close(self) -> None:
        if self._brain is not None:
            self._brain.close()
            self._brain = None
        self.providers.close()

    def surface(self, flag: str | None) -> str:
        """--surface flag > config mcp_surface > full; MEMVERBS_MCP_FORCE_SURFACE can only narrow."""
        if flag is not None:
            chosen = flag
        elif self.config_error is not None:
            chosen = "verbs"  # cannot read the configured surface: serve the smallest one
        else:
            chosen = self._pick(lambda s: s.mcp_surface, lambda q: q.mcp_surface, None) or DEFAULT_SURFACE
        forced = os.environ.get("MEMVERBS_MCP_FORCE_SURFACE", "").strip()
        if forced:
            if forced in SURFACES:
                chosen = narrower(chosen, forced)
            else:
                print(f"memverbs: ignoring MEMVERBS_MCP_FORCE_SURFACE={forced!r} (not one of {', '.join(SURFACES)})", file=sys.stderr)  # noqa: T201 - stderr is the harness's server log
        return chosen

    def mcp_dispatcher(
        self,
        surface: str,
        caller: Caller | None = None,
        *,
        open_brain: Callable[[], Brain] | None = None,
        usage_client: str | None = None,
    ) -> Dispatcher:
        """An MCP caller's dispatcher. `open_brain` overrides the process's one connection (HTTP
        workers pass their thread's own); `usage_client` tags usage lines with a token's client id."""
        caller = caller or Caller.mcp(self.source)
        brain_id = str(self.home.root)

        def log_call(verb: str, ok: bool, latency_ms: int, result: dict | None) -> None:
            usage.record(
                self.home.usage_log,
                brain_id=brain_id,
                verb=verb,
                surface=surface,
                remote=caller.remote,
                ok=ok,
                latency_ms=latency_ms,
                source_id=caller.source_id,
                result=result,
                client_id=usage_client,
                waited=waits.take(),
            )

        return Dispatcher(
            caller=caller,
            surface=surface,
            open_brain=open_brain or self.brain,
            strict_params=self._pick(lambda s: s.mcp.strict_params, lambda q: q.strict_params, DEFAULTS["mcp.strict_params"]) == "reject",
            remote_private_pages=self._remote_private_pages(),
            on_call=None if usage.disabled() else log_call,
            providers=self.providers,
        )

    def local_dispatcher(self, surface: str = "full", project: Project | None = None, lane: str = LOCAL_LANE) -> Dispatcher:
        """The trusted in-process caller (CLI, hooks): lane 'local' (markdown sync: 'sync'), not
        usage-logged; `project` is where it runs (the CLI's working directory), for what it
        remembers and its packs."""
        return Dispatcher.local(self.source, self.brain, surface, providers=self.providers, project=project, lane=lane)

    def _remote_private_pages(self) -> bool:
        if os.environ.get("MEMVERBS_REMOTE_PRIVATE_PAGES", "").strip() == "1":
            return True
        return bool(self._pick(lambda s: s.search.remote_private_pages, lambda q: q.remote_private_pages, DEFAULTS["search.remote_private_pages"]))
