"""Hybrid search (recall's search arm and the search op) with an embedding provider, in real SQLite."""

import httpx
import pytest
import respx
from helpers import Client, page
from provider_fakes import (
    EMBED_BASE,
    PROVIDER_SECRET,
    clients,
    embeddings_env,
    hashing_embeddings,
    hashing_runtime,
    provider_error,
)

from memverbs.server.providers.config import Providers
from memverbs.server.reindex import reindex
from memverbs.server.runtime import Runtime

FREEZE = "We never ship releases on Fridays."
PARAPHRASE = "halt shipping before the weekend"
SYNONYMS = "pause rollout before the weekend"  # the same meaning, and no word that shares a stem with FREEZE's


@pytest.fixture
def rt(home):
    runtime = hashing_runtime(home)
    yield runtime
    runtime.close()


@pytest.fixture
def both(rt):
    return clients(rt)


def test_paraphrase_is_a_high_vector_match_and_not_degraded(both):
    local, remote = both
    page(local, "notes/deploy-freeze", "Deploy freeze", body=FREEZE)
    page(local, "companies/acme", "Acme Payments", body="Acme runs the payments platform for Example Corp.")
    body = remote.ok("recall", query=PARAPHRASE)
    assert "search_degraded" not in body
    assert list(body) == ["facts", "total", "protocol_version", "results", "facts_note"]  # a brain without facts
    [hit] = body["results"]  # the unrelated page is below the vector arm's relative cut
    assert list(hit) == ["slug", "title", "chunk", "evidence", "create_safety", "provenance"]
    assert (hit["slug"], hit["evidence"], hit["create_safety"]) == ("notes/deploy-freeze", "high_vector_match", "exists")
    assert FREEZE in hit["chunk"] and hit["provenance"] == "notes/deploy-freeze"
    assert "search_degraded" not in remote.ok("search", query=PARAPHRASE)


def test_evidence_rules_in_order(both):
    local, remote = both
    page(local, "people/alice", "Alice Example", aliases=["The Boss"], body="Alice leads the platform group.")
    page(local, "companies/acme", "Acme Payments", body="Acme runs the payments platform.")
    filler = " ".join(f"word{n}" for n in range(60))
    page(local, "notes/mixed", "Quarterly notes", body=f"{filler} invoices platform {filler}")
    page(local, "notes/checkout", "Checkout", body="Customers pay at the checkout counter.")

    def evidence(query: str) -> dict:
        return {r["slug"]: r["evidence"] for r in remote.ok("recall", query=query)["results"]}

    assert evidence("the boss")["people/alice"] == "alias_hit"
    assert evidence("Acme Payments")["companies/acme"] == "exact_title_match"
    got = evidence("invoices platform")
    assert got["notes/mixed"] == "keyword_exact"  # both terms, but one short query against a long chunk
    assert got["companies/acme"] == "weak_semantic"  # half the terms: below 60 %, and not close enough in meaning
    safety = {r["slug"]: r["create_safety"] for r in remote.ok("recall", query="invoices platform")["results"]}
    assert safety["notes/mixed"] == "probable" and safety["companies/acme"] == "unknown"


def test_private_and_deleted_pages_stay_out_of_the_vector_arm(both):
    local, remote = both
    page(local, "notes/secret-freeze", "Secret freeze", body=FREEZE, visibility="private")
    page(local, "notes/gone", "Gone freeze", body=FREEZE + " Gone.")
    local.ok("delete_page", slug="notes/gone")
    assert remote.ok("recall", query=PARAPHRASE)["results"] == []
    assert [r["slug"] for r in local.ok("recall", query=PARAPHRASE)["results"]] == ["notes/secret-freeze"]


def test_other_sources_are_never_returned(home, monkeypatch, rt):
    local, _ = clients(rt)
    page(local, "notes/deploy-freeze", "Deploy freeze", body=FREEZE)
    monkeypatch.setenv("MEMVERBS_SOURCE", "work")
    other = hashing_runtime(home)
    try:
        assert Client(other.mcp_dispatcher("full")).ok("recall", query=PARAPHRASE)["results"] == []
    finally:
        other.close()


def test_an_edit_re_embeds_only_changed_chunks(both, rt):
    local, _ = both
    embedder = rt.providers.embedder()
    body = "# Part one\n" + ("Alpha text. " * 40) + "\n\n# Part two\n" + ("Beta text. " * 40)
    page(local, "notes/long", "Long", body=body)
    first = embedder.texts_embedded
    assert first == 2
    page(local, "notes/long", "Long", body=body.replace("Beta text.", "Gamma text."))
    assert embedder.texts_embedded == first + 1  # part one's vector was reused
    page(local, "notes/copy", "Long", body=body)  # same title and text elsewhere: nothing new to embed
    assert embedder.texts_embedded == first + 1


def test_pages_written_before_the_provider_are_keyword_only_until_reindexed(home, runtime):
    plain = Client(runtime.local_dispatcher())
    page(plain, "notes/deploy-freeze", "Deploy freeze", body=FREEZE)
    rt = hashing_runtime(home)
    try:
        local, remote = clients(rt)
        page(local, "notes/unrelated", "Unrelated", body="Alice likes tea.")  # the index is no longer empty
        body = remote.ok("recall", query=SYNONYMS)
        assert "search_degraded" not in body and body["results"] == []
        report = reindex(rt.brain(), rt.providers.embedder())
        assert report.chunks_embedded == 1 and report.facts_embedded == 0
        assert remote.ok("recall", query=SYNONYMS)["results"][0]["evidence"] == "high_vector_match"
    finally:
        rt.close()


def test_nothing_embedded_yet_says_so(home, runtime):
    page(Client(runtime.local_dispatcher()), "notes/deploy-freeze", "Deploy freeze", body=FREEZE)
    rt = hashing_runtime(home)
    try:
        body = Client(rt.mcp_dispatcher("full")).ok("recall", query="deploy freeze")
        assert body["search_degraded"] == "keyword_only_vector_index_empty"
        assert body["results"][0]["slug"] == "notes/deploy-freeze"
    finally:
        rt.close()


@respx.mock
def test_over_http_and_a_failing_provider_falls_back_to_keywords(home, monkeypatch):
    embeddings_env(monkeypatch)
    route = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    rt = Runtime(home)
    try:
        local, remote = clients(rt)
        page(local, "notes/deploy-freeze", "Deploy freeze", body=FREEZE)
        assert route.call_count == 1  # the page was embedded on write
        hit = remote.ok("recall", query=PARAPHRASE)["results"][0]
        assert hit["evidence"] == "high_vector_match"

        route.mock(return_value=provider_error(500))
        body = remote.ok("recall", query="deploy freeze")
        assert body["search_degraded"] == "keyword_only_embedding_failed"
        assert body["results"][0]["slug"] == "notes/deploy-freeze"
        assert PROVIDER_SECRET not in str(body)

        route.mock(side_effect=httpx.ConnectTimeout("no"))
        assert local.ok("put_page", slug="notes/x", content="# X\nbody\n")["status"] == "created"  # a write never fails on embedding
    finally:
        rt.close()


def test_recall_ranks_a_fact_only_the_vector_arm_finds(both):
    _local, remote = both
    remote.ok("remember", fact="Bob bought a new automobile", provenance="chat", entity="people/bob")
    for n in range(3):
        remote.ok("remember", fact=f"lunch number {n} was pizza", provenance="chat", entity="people/carol")
    body = remote.ok("recall", query="which vehicle", limit=2)
    assert [f["fact"] for f in body["facts"]] == ["Bob bought a new automobile"]  # the rest match neither way
    assert [f["fact"] for f in remote.ok("search", query="which vehicle")["facts"]] == ["Bob bought a new automobile"]


class _MeaningEmbedder:
    """Fixed vectors for the texts of one test: what a model would say is close in meaning."""

    provider = "test"
    model = "meaning-4"
    dims = 4

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts):
        import numpy as np

        rows = np.array([self.vectors.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def close(self) -> None:
        pass


def test_recall_fuses_the_arms_by_score_not_rank(home):
    # Both facts hold the query's words equally (the same BM25); only the vectors tell them apart.
    # By rank the newer fact, first on keywords by its id, would win over the one far closer in
    # meaning; by score the keyword tie leaves the vector arm to decide.
    close, far = "the garden roses were red", "the garden roses were pink"
    embedder = _MeaningEmbedder({"garden roses": [1, 0, 0, 0], close: [0.95, 0.3, 0, 0], far: [0.3, 0.95, 0, 0]})
    rt = Runtime(home, providers=Providers(None, embedder=embedder, chat=None))
    try:
        _local, remote = clients(rt)
        remote.ok("remember", fact=close, provenance="chat")
        remote.ok("remember", fact=far, provenance="chat")
        assert [f["fact"] for f in remote.ok("recall", query="garden roses", limit=2)["facts"]] == [close, far]
    finally:
        rt.close()


class _TitleEmbedder(_MeaningEmbedder):
    """A page chunk's vector is its title's (the embedded text begins with it); the query's is looked up whole."""

    def embed(self, texts):
        import numpy as np

        def vector(text: str) -> list[float]:
            return next((v for key, v in self.vectors.items() if text == key or text.startswith(key)), [0.0, 0.0, 0.0, 1.0])

        rows = np.array([vector(t) for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_pages_fuse_the_arms_by_score_so_near_ties_in_meaning_do_not_push_out_the_keyword_match(home):
    # Every page is about as close to the question in meaning (as the sessions of one conversation
    # are); only one holds its words. By rank, a neighbour holding one of the words once and a hair
    # closer in meaning scored 1/61 + 1/62 against the answer's 1/61 + 1/64 and took its place; by
    # score the near-tie in cosine decides nothing and the keyword arm's clear lead stands.
    filler = " ".join(f"word{n}" for n in range(40))
    answer = ("Day one", f"We visited the quokka sanctuary. The quokka sanctuary was full. {filler}")
    neighbours = [(f"Day {n}", f"{filler} a quokka poster {filler}") for n in ("two", "three", "four")]
    vectors: dict[str, list[float]] = {"quokka sanctuary": [1, 0, 0, 0], answer[0]: [0.88, 0.475, 0, 0]}
    vectors |= {title: [0.92 - 0.01 * n, 0.436, 0, 0] for n, (title, _) in enumerate(neighbours)}
    rt = Runtime(home, providers=Providers(None, embedder=_TitleEmbedder(vectors), chat=None))
    try:
        local, remote = clients(rt)
        for n, (title, body) in enumerate([answer, *neighbours]):
            page(local, f"notes/day-{n}", title, body=body)
        body = remote.ok("recall", query="quokka sanctuary", limit=1)
        assert "search_degraded" not in body
        assert [r["slug"] for r in body["results"]] == ["notes/day-0"]
        assert remote.ok("recall", query="quokka sanctuary", limit=4)["results"][0]["slug"] == "notes/day-0"
    finally:
        rt.close()
