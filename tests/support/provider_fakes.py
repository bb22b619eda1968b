"""Test parts for the providers: env that configures them, and respx routes that answer like the real APIs.

Only what is outside this machine is faked, and only at the HTTP layer (respx):
the embeddings route answers with the deterministic hashing embedder's vectors,
so a test through the real OpenAI-compatible client still gets meaningful
similarities. Nothing of memverbs's own is patched.
"""

from __future__ import annotations

import json

import httpx
import keyring
import pytest
from helpers import Client
from keyring.backends import null

from memverbs.server.providers.config import Providers
from memverbs.server.providers.testing import HashingEmbedder
from memverbs.server.runtime import Runtime

EMBED_BASE = "http://embeddings.test/v1"
CHAT_BASE = "http://chat.test"
OPENAI_CHAT_BASE = "http://compat.test/v1"
PROVIDER_SECRET = "PROVIDER-RAW-TEXT-8812"  # planted in provider error bodies: must never reach the wire


@pytest.fixture
def no_keyring():
    """The OS keyring answers nothing (the library's own null backend), then is restored."""
    before = keyring.get_keyring()
    keyring.set_keyring(null.Keyring())
    yield
    keyring.set_keyring(before)


def embeddings_env(monkeypatch, *, base_url: str = EMBED_BASE, model: str = "test-embed", key: str | None = "sk-embed") -> None:
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__MODEL", model)
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__BASE_URL", base_url)
    if key is None:
        monkeypatch.delenv("MEMVERBS_EMBEDDINGS_API_KEY", raising=False)
    else:
        monkeypatch.setenv("MEMVERBS_EMBEDDINGS_API_KEY", key)


def llm_env(monkeypatch, *, provider: str = "anthropic", base_url: str | None = None, model: str = "claude-sonnet-4-5",
            key: str | None = "sk-llm") -> None:
    monkeypatch.setenv("MEMVERBS_LLM__PROVIDER", provider)
    monkeypatch.setenv("MEMVERBS_LLM__MODEL", model)
    monkeypatch.setenv("MEMVERBS_LLM__BASE_URL", base_url or (CHAT_BASE if provider == "anthropic" else OPENAI_CHAT_BASE))
    if key is None:
        monkeypatch.delenv("MEMVERBS_LLM_API_KEY", raising=False)
    else:
        monkeypatch.setenv("MEMVERBS_LLM_API_KEY", key)


def hashing_embeddings(request: httpx.Request) -> httpx.Response:
    """An OpenAI-compatible /embeddings answer, vectors from the hashing embedder."""
    body = json.loads(request.content)
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    rows = HashingEmbedder(dims=body.get("dimensions") or 256).embed(texts)
    data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in row]} for i, row in enumerate(rows)]
    # Shuffled order on purpose: clients must sort by index.
    return httpx.Response(200, json={"object": "list", "data": data[::-1], "model": body["model"], "usage": {"prompt_tokens": 3}})


def anthropic_reply(text: str, *, usage: dict | None = None, stop_reason: str = "end_turn") -> httpx.Response:
    body: dict = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
    }
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def openai_reply(text: str | None, *, usage: dict | None = None, refusal: str | None = None) -> httpx.Response:
    message: dict = {"role": "assistant", "content": text}
    if refusal is not None:
        message["refusal"] = refusal
    body: dict = {"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def provider_error(status: int) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": f"{PROVIDER_SECRET} internal detail", "type": "x"}})


def hashing_runtime(home, *, dims: int = 256) -> Runtime:
    """A runtime whose embedder is the in-process hashing embedder (no HTTP at all)."""
    return Runtime(home, providers=Providers(None, embedder=HashingEmbedder(dims=dims), chat=None))


def clients(runtime: Runtime) -> tuple[Client, Client]:
    """(trusted local, untrusted remote) callers on one runtime."""
    return Client(runtime.local_dispatcher()), Client(runtime.mcp_dispatcher("full"))
