"""The OpenAI-compatible embeddings client over real httpx, the API mocked with respx."""

import json

import httpx
import numpy as np
import pytest
import respx
from provider_fakes import EMBED_BASE, PROVIDER_SECRET, hashing_embeddings, provider_error

from memverbs.server.errors import ProviderError
from memverbs.server.providers.embeddings import OpenAIEmbeddings
from memverbs.server.settings import EmbeddingsSettings


def client(**overrides) -> OpenAIEmbeddings:
    cfg = EmbeddingsSettings(model="test-embed", base_url=EMBED_BASE, timeout_seconds=2, **overrides)
    return OpenAIEmbeddings(cfg, "sk-test", "export MEMVERBS_EMBEDDINGS_API_KEY=…")


@respx.mock
def test_success_batches_sorts_by_index_and_normalises():
    route = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    rows = client(batch_size=2).embed(["alpha one", "beta two", "gamma three"])
    assert rows.shape == (3, 256) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert route.call_count == 2  # batch_size 2: two requests for three texts
    first = json.loads(route.calls[0].request.content)
    assert first["input"] == ["alpha one", "beta two"] and first["model"] == "test-embed"
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-test"
    # Order follows "index", not arrival order (the fake answers reversed).
    assert rows[0] @ client().embed(["alpha one"])[0] > 0.99


@respx.mock
def test_dimensions_are_requested_and_checked():
    route = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    embedder = client(dimensions=64)
    assert embedder.dims == 64
    assert embedder.embed(["x"]).shape == (1, 64)
    assert json.loads(route.calls[0].request.content)["dimensions"] == 64


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (provider_error(429), "rate_limited"),
        (provider_error(529), "rate_limited"),
        (provider_error(500), "provider_error"),
        (provider_error(401), "provider_error"),
        (provider_error(404), "model_unusable"),
        (httpx.Response(200, text="<html>not json</html>"), "provider_error"),
        (httpx.Response(200, json={"data": [{"embedding": "nope"}]}), "provider_error"),
        (httpx.Response(200, json={"data": []}), "provider_error"),
    ],
)
@respx.mock
def test_failures_are_classified_and_never_quote_the_provider(answer, kind):
    respx.post(f"{EMBED_BASE}/embeddings").mock(return_value=answer)
    with pytest.raises(ProviderError) as exc:
        client().embed(["x"])
    assert exc.value.kind == kind
    assert PROVIDER_SECRET not in exc.value.message and PROVIDER_SECRET not in exc.value.fix
    assert exc.value.fix


@respx.mock
def test_timeout_and_network_failures():
    respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ProviderError) as exc:
        client().embed(["x"])
    assert exc.value.kind == "timeout" and "within 2s" in exc.value.message

    respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderError) as exc:
        client().embed(["x"])
    assert exc.value.kind == "network" and "embeddings.base_url" in exc.value.fix


@respx.mock
def test_a_rejected_key_says_how_to_set_one():
    respx.post(f"{EMBED_BASE}/embeddings").mock(return_value=provider_error(401))
    with pytest.raises(ProviderError) as exc:
        client().embed(["x"])
    assert "rejected the API key (HTTP 401)" in exc.value.message
    assert "MEMVERBS_EMBEDDINGS_API_KEY" in exc.value.fix
