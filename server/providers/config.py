"""Which providers this home's settings configure, built lazily.

Creating `Providers` costs nothing: no key lookup, no import of httpx or numpy,
no network. The first verb that needs an embedder or a chat model builds it
(keys from the environment, then the keyring) and keeps it for the process. A
provider that is not configured is None, and `*_problem` says why in words a
person can act on; the verbs then degrade exactly as the contract says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memverbs.server.providers import keys

if TYPE_CHECKING:
    from memverbs.server.providers.chat import ChatModel
    from memverbs.server.providers.embeddings import Embedder
    from memverbs.server.settings import Settings

_UNSET: Any = object()  # "not given": None is a value here (no provider)


class Providers:
    def __init__(
        self,
        settings: Settings | None,
        *,
        embedder: Embedder | None = _UNSET,
        chat: ChatModel | None = _UNSET,
        load: Callable[[], Settings | None] | None = None,
        models: Callable[[], tuple[str, str] | None] | None = None,
    ) -> None:
        """`embedder` / `chat` given explicitly (tests, benchmarks) win over the settings; `load`
        fetches the settings at first use instead (the runtime's, which may not be loaded yet);
        `models` says (embeddings.model, llm.model) without loading them (quickconfig's reading, None
        when it cannot vouch), so a brain with no provider never pays for the full settings."""
        self._settings = settings
        self._load = load
        self._models = models
        self._embedder = embedder
        self._chat = chat
        self.embedder_problem: str | None = None
        self.chat_problem: str | None = None

    @property
    def settings(self) -> Settings | None:
        if self._load is not None:
            self._settings, self._load = self._load(), None
        return self._settings

    @property
    def cosine_floor(self) -> float:
        return self.settings.search.evidence_cosine_floor if self.settings else 0.8

    # -- embeddings -----------------------------------------------------------

    def _quick_model(self, which: int) -> str | None:
        """A model setting as read without the full settings, while they are not loaded; None: ask them."""
        if self._load is None or self._models is None:
            return None
        models = self._models()
        return None if models is None else models[which]

    @property
    def embeddings_configured(self) -> bool:
        if self._embedder is not _UNSET:
            return self._embedder is not None
        quick = self._quick_model(0)
        if quick is not None and not quick.strip():
            return False
        return bool(self.settings and self.settings.embeddings.model.strip())

    def embedder(self) -> Embedder | None:
        if self._embedder is _UNSET:
            self._embedder = self._build_embedder()
        return self._embedder

    def _build_embedder(self) -> Embedder | None:
        settings = self.settings
        if settings is None or not self.embeddings_configured:
            self.embedder_problem = "no embedding provider configured (embeddings.model is empty)"
            return None
        cfg = settings.embeddings
        from memverbs.server.providers import extra  # noqa: PLC0415

        missing = extra.problem()
        if missing is not None:  # vectors need numpy: degrade as for a missing provider, and say why
            self.embedder_problem = f"embeddings.model is {cfg.model!r}, but {missing}: {extra.install(cfg.provider)}"
            return None
        if cfg.provider == "local":
            from memverbs.server.providers.local_embeddings import LocalEmbeddings  # noqa: PLC0415

            return LocalEmbeddings(cfg)
        key, _ = keys.lookup(keys.EMBEDDINGS_KEY)
        if key is None and not cfg.base_url.strip():
            self.embedder_problem = (
                f"embeddings.model is {cfg.model!r} on the public OpenAI API, but no API key was found"
            )
            return None
        from memverbs.server.providers.embeddings import OpenAIEmbeddings  # noqa: PLC0415

        return OpenAIEmbeddings(cfg, key, keys.how_to_set(keys.EMBEDDINGS_KEY))

    # -- chat -------------------------------------------------------------------

    @property
    def llm_configured(self) -> bool:
        if self._chat is not _UNSET:
            return self._chat is not None
        quick = self._quick_model(1)
        if quick is not None and not quick.strip():
            return False
        return bool(self.settings and self.settings.llm.model.strip())

    def chat(self) -> ChatModel | None:
        if self._chat is _UNSET:
            self._chat = self._build_chat()
        return self._chat

    def _build_chat(self) -> ChatModel | None:
        settings = self.settings
        if settings is None or not self.llm_configured:
            self.chat_problem = "no chat model configured (llm.model is empty)"
            return None
        cfg = settings.llm
        key, _ = keys.lookup(keys.LLM_KEY)
        if key is None and not cfg.base_url.strip():
            self.chat_problem = f"llm.model is {cfg.model!r} on the public {cfg.provider} API, but no API key was found"
            return None
        from memverbs.server.providers.chat import AnthropicChat, OpenAIChat  # noqa: PLC0415

        cls = AnthropicChat if cfg.provider == "anthropic" else OpenAIChat
        return cls(cfg, key, keys.how_to_set(keys.LLM_KEY))

    def price(self) -> tuple[float, float] | None:
        from memverbs.server.providers.pricing import price_for  # noqa: PLC0415

        chat = self.chat()
        if chat is None:
            return None
        cfg = self.settings.llm if self.settings else None
        return price_for(
            chat.model,
            cfg.price_input_per_mtok if cfg else None,
            cfg.price_output_per_mtok if cfg else None,
        )

    def close(self) -> None:
        for made in (self._embedder, self._chat):
            if made is not _UNSET and made is not None:
                made.close()
