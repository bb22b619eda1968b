"""recall's facts ranking is FTS5's BM25, score for score, on every backend.

SQLite ranks with FTS5 (or its own copy of FTS5's arithmetic); Postgres computes the formula in
SQL. Both are held here to the formula written out in Python over the stored terms: k1 1.2, b
0.75, idf ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, N and the mean length over every fact
(expired ones too: the index keeps them), the shares summed in the query's order, ties newest first.
"""

from __future__ import annotations

import pytest
from bm25 import bm25
from helpers import Client

from memverbs.server.brain.base import FactFilter, SearchQuery
from memverbs.server.terms import query_terms
from memverbs.server.timeparse import now_ms

S = "default"
TEXTS = [
    "comet comet comet over the lake",
    "a comet",
    "nebula and comet and a long tail of words that make this fact much longer than the others around it",
    "the lake at dawn",
    "lake lake lake lake",
    "a comet",  # the same text twice: the same score, the newer first
    "nothing in common",
    "comet sighting expired later",
]
QUERIES = ["comet", "lake", "comet lake", "lake comet", "nebula comet lake", "absent words", "comet comet nebula"]


def test_facts_rank_by_fts5s_bm25_on_every_backend(runtime):
    local = Client(runtime.local_dispatcher())
    ids = [int(local.ok("remember", fact=t, provenance="t", entity="people/p")["id"]) for t in TEXTS]
    local.ok("forget", id=str(ids[-1]), reason="gone")  # expired: not ranked, still counted
    brain = runtime.brain()
    stored = [(r["id"], r["search_terms"]) for r in brain.query("SELECT id, search_terms FROM facts ORDER BY id", ())]
    f = FactFilter("recent", now_ms(), False, True, 50)
    for q in QUERIES:
        terms = query_terms(q)
        ranked = brain.facts_ranked(S, f, SearchQuery.of(terms, "any"), limit=50)
        expected = [(s, i) for s, i in bm25(stored, terms) if i != ids[-1]]
        assert [r["id"] for r in ranked] == [i for _, i in expected], q
        assert [r["score"] for r in ranked] == pytest.approx([s for s, _ in expected], rel=1e-12), q
