"""Provider health for `memverbs doctor`: configured or not, reachable, key accepted, model known, index coverage.

A probe is one tiny live call per configured provider (an embedding of one
word; the chat API's free model list, so doctor never spends tokens), with a
short timeout. Every failure becomes a problem line with its fix; nothing here
raises, so a bad provider can never crash doctor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.errors import BrainError, ProviderError
from memverbs.server.plural import plural
from memverbs.server.providers import keys
from memverbs.server.providers.chat import AnthropicChat, OpenAIChat
from memverbs.server.providers.config import Providers
from memverbs.server.providers.embeddings import OpenAIEmbeddings
from memverbs.server.settings import Settings
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.location import BrainLocation

PROBE_TIMEOUT_SECONDS = 10
Row = tuple[str, str, str, str | None]  # name, status (ok|warn|fail), detail, fix


def provider_checks(settings: Settings, where: BrainLocation) -> list[Row]:
    probed = settings.model_copy(deep=True)
    probed.embeddings.timeout_seconds = min(settings.embeddings.timeout_seconds, PROBE_TIMEOUT_SECONDS)
    probed.llm.timeout_seconds = min(settings.llm.timeout_seconds, PROBE_TIMEOUT_SECONDS)
    providers = Providers(probed)
    try:
        rows = [embeddings_check(providers)]
        if rows[0][1] == "ok" and providers.embeddings_configured:
            rows.append(index_check(providers, where))
        rows.append(llm_check(providers))
        return rows
    finally:
        providers.close()


def embeddings_check(providers: Providers) -> Row:
    assert providers.settings is not None, "provider_checks builds its Providers from settings"
    cfg = providers.settings.embeddings
    from memverbs.server.providers import extra  # noqa: PLC0415

    missing = extra.problem()
    if not providers.embeddings_configured:
        need = f" and install the embeddings extra: {extra.INSTALL}" if missing else ""
        return ("embeddings", "ok", f"not configured: keyword-only search, degraded dedup (set embeddings.model{need} to enable)", None)
    if missing is not None:
        return ("embeddings", "fail", f"embeddings.model is {cfg.model!r}, but {missing}", extra.fix(cfg.provider))
    embedder = providers.embedder()
    if embedder is None:
        return ("embeddings", "fail", providers.embedder_problem or "not usable", keys.how_to_set(keys.EMBEDDINGS_KEY))
    # An HTTP provider is probed where it lives; the local one (embeddings.provider = local) on this CPU, keyless.
    remote = isinstance(embedder, OpenAIEmbeddings)
    where = f"{cfg.provider} {cfg.model!r} " + (f"at {embedder.api.host}" if isinstance(embedder, OpenAIEmbeddings) else "on this CPU")
    try:
        rows = embedder.embed(["memverbs doctor"])
    except ProviderError as exc:
        return ("embeddings", "fail", f"{where}: {exc.message}", exc.fix or "Check the embeddings settings.")
    if not remote:
        return ("embeddings", "ok", f"{where}: {rows.shape[1]} dims (no key needed)", None)
    _, source = keys.lookup(keys.EMBEDDINGS_KEY)
    return ("embeddings", "ok", f"{where}: {rows.shape[1]} dims (key: {source})", None)


def index_check(providers: Providers, where: BrainLocation) -> Row:
    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415

    embedder = providers.embedder()
    assert embedder is not None, "checked only after embeddings_check passed"
    if where.exists() is False:
        return ("vector_index", "ok", "no brain yet", None)
    try:
        brain = open_brain(where, read_only=True, pool_size=1)
        try:
            space = brain.space_for(embedder.provider, embedder.model, embedder.dims)
            missing = brain.missing_vector_counts(space, now_ms())
        finally:
            brain.close()
    except BrainError:
        return ("vector_index", "ok", "not checked: the brain's schema is not current (see schema)", None)
    left = missing["chunks"] + missing["facts"] + missing["unchunked_pages"]
    if left:
        return (
            "vector_index",
            "warn",
            f"{plural(missing['chunks'], 'chunk')}, {plural(missing['facts'], 'active fact')} and "
            f"{plural(missing['unchunked_pages'], 'unchunked page')} have no vector for {embedder.model}: search finds them by "
            "keyword only",
            "Run `memverbs reindex`.",
        )
    return ("vector_index", "ok", f"every chunk and active fact has a vector for {embedder.model}", None)




def llm_check(providers: Providers) -> Row:
    assert providers.settings is not None, "provider_checks builds its Providers from settings"
    cfg = providers.settings.llm
    if not providers.llm_configured:
        return ("llm", "ok", "not configured: synthesize answers unavailable (set llm.model and its key to enable)", None)
    chat = providers.chat()
    if chat is None:
        return ("llm", "fail", providers.chat_problem or "not usable", keys.how_to_set(keys.LLM_KEY))
    assert isinstance(chat, AnthropicChat | OpenAIChat), "built from settings: an HTTP provider"
    where = f"{cfg.provider} {cfg.model!r} at {chat.api.host}"
    try:
        models = chat.list_models()
    except ProviderError as exc:
        if exc.kind == "model_unusable":  # some compatible servers have no model list
            return ("llm", "warn", f"{where}: the server has no model list (HTTP 404); the model was not checked", None)
        return ("llm", "fail", f"{where}: {exc.message}", exc.fix or "Check the llm settings.")
    _, source = keys.lookup(keys.LLM_KEY)
    if models and cfg.model not in models:
        return (
            "llm",
            "warn",
            f"{where}: reachable, but {cfg.model!r} is not among the {len(models)} models it lists",
            "Check llm.model against the provider's model ids.",
        )
    return ("llm", "ok", f"{where}: reachable, model listed (key: {source})", None)
