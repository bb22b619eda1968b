"""The keyword rankings' quick forms give what their plain forms give, on every backend.

SQLite ranks pages (for a caller that takes no index snippet) and facts in the index first and
reads only the best rows; when too few of those pass the caller's filter it falls back to the
whole ranking. These hold the quick forms to the whole ranking where the filter keeps most
matches, few, none, and where the index matched fewer than it was asked for, and ties.
"""

from __future__ import annotations

import pytest
from helpers import Client, page

from memverbs.server.brain.base import FactFilter, SearchQuery
from memverbs.server.terms import query_terms
from memverbs.server.timeparse import now_ms

S = "default"


@pytest.fixture
def grown(runtime):
    local = Client(runtime.local_dispatcher())
    for i in range(60):
        # The strongest matches are private (hidden from an untrusted caller): the index's best are
        # filtered out and the whole ranking must decide. Same counts tie on rank (the ids decide).
        private = i >= 24
        words = "comet " * ((6 + i % 3) if private else (1 + i % 5)) + ("nebula " if i % 4 == 0 else "") + ("rare" if i == 7 else "")
        page(local, f"notes/n-{i:02d}", f"Note {i}", body=f"{words}\nfiller line {i}",
             **({"visibility": "private"} if private else {}))
        local.ok("remember", fact=f"{words} observed {i}", provenance="t", visibility="private" if private else "world")
    return runtime.brain()


QUERIES = [["comet"], ["nebula"], ["rare"], ["comet", "nebula"], ["absent"], ["nebula", "rare"]]


@pytest.mark.parametrize("allow_private", [False, True])
@pytest.mark.parametrize("limit", [1, 3, 5, 10, 30])
def test_pages_ranked_in_the_index_first_are_the_whole_ranking(grown, allow_private, limit):
    for terms in QUERIES:
        for mode in ("any", "all"):
            q = SearchQuery.of(terms, mode)
            quick = grown.keyword_search(S, q, limit=limit, allow_private=allow_private, snippets=False)
            whole = grown.keyword_search(S, q, limit=limit, allow_private=allow_private, snippets=True)
            assert [r["slug"] for r in quick] == [r["slug"] for r in whole], (terms, mode)
            assert [r["body"] for r in quick] == [r["body"] for r in whole]
            assert all(r["chunk"] is None for r in quick)


@pytest.mark.parametrize("world_only", [True, False])
@pytest.mark.parametrize("limit", [1, 3, 5, 10, 30])
def test_facts_ranked_in_the_index_first_are_the_whole_ranking(grown, world_only, limit):
    f = FactFilter("recent", now_ms(), world_only, True, limit)
    every = [r["id"] for r in grown.facts(S, FactFilter("recent", now_ms(), False, True, 1000))]
    for terms in QUERIES:
        q = SearchQuery.of(query_terms(" ".join(terms)), "any")
        quick = grown.facts_ranked(S, f, q, limit=limit)
        whole = grown.facts_ranked(S, f, q, limit=limit, among=every)  # the whole ranking, restricted to every fact
        assert [(r["id"], r["score"]) for r in quick] == [(r["id"], r["score"]) for r in whole], terms
