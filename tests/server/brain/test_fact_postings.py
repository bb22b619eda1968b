"""SQLite's in-process facts ranking (sqlite_fact_rank.py) is FTS5's own, and never stale or leaky.

The postings are held to `ORDER BY bm25(facts_fts), rowid DESC` score for score, on facts of every
length, repeated terms, ties, a term most facts hold (its idf floored), CJK pairs; they follow
writes made by this connection, by another connection and by a rewrite of a fact's terms; and
what a caller may see is still decided by SQL: a fact made private or forgotten by another
connection after the postings are warm never reaches an untrusted caller.
"""

from __future__ import annotations

import sqlite3

import pytest
from helpers import Client

from memverbs.server.brain import sqlite_fact_rank
from memverbs.server.brain.base import FactFilter, SearchQuery
from memverbs.server.brain.sqlite_dialect import fts5_match
from memverbs.server.brain.sqlite_fact_rank import FactPostings, postings_for
from memverbs.server.runtime import Runtime
from memverbs.server.terms import query_terms
from memverbs.server.timeparse import now_ms

pytestmark = pytest.mark.sqlite_only
S = "default"

TEXTS = [
    "comet comet comet over the lake",
    "a comet",
    "nebula and comet and a long tail of words that make this fact much longer than the others around it",
    "the lake at dawn",
    "painting a sunrise over the lake, painted last year",
    "paints and paintings",
    "北京烤鸭很好吃",
    "我喜欢北京",
    "lake lake lake lake",
    "nothing in common",
    "a comet",  # the same text twice: the same score, the newer first
]
QUERIES = ["comet", "lake", "comet lake", "painting sunrise", "北京", "nebula comet lake", "absent words", "lake comet"]


@pytest.fixture
def brain(runtime):
    local = Client(runtime.local_dispatcher())
    for i, text in enumerate(TEXTS):
        local.ok("remember", fact=text, provenance="t", entity=f"people/p{i % 3}", visibility="private" if i % 4 == 1 else "world")
    return runtime.brain()


def fts5_ranking(db: sqlite3.Connection, terms: list[str]) -> list[tuple[float, int]]:
    rows = db.execute(
        "SELECT -bm25(facts_fts), rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY bm25(facts_fts), rowid DESC",
        (fts5_match(SearchQuery.of(terms, "any")),),
    ).fetchall()
    return [(score, rowid) for score, rowid in rows]


def test_postings_score_every_match_as_fts5_does(brain):
    postings = FactPostings()
    assert postings.refresh(brain.db)
    assert len(postings.ids) == len(TEXTS)
    for q in QUERIES:
        terms = query_terms(q)
        whole = postings.ranked(terms)
        assert whole == fts5_ranking(brain.db, terms), q  # the same floats, the same order
        for top in (1, 2, 3):
            assert postings.ranked(terms, top=top) == whole[:top]
    # a term held twice in the query is two phrases to FTS5: counted twice here too
    assert postings.ranked(["comet", "comet"]) == fts5_ranking(brain.db, ["comet", "comet"])


def _warm(brain, world: bool = False) -> bool:
    """The postings the ranking of world facts only (`world`) or of all facts reads are loaded."""
    postings = postings_for(brain.path, brain.db, world)
    if postings is None:
        return False
    postings.lock.release()
    return True


def _fts5_only(monkeypatch, brain, f, q, limit):
    with monkeypatch.context() as m:
        m.setattr(sqlite_fact_rank, "rank_in_process", lambda *a, **k: None)
        return [(r["id"], r["score"]) for r in brain.facts_ranked(S, f, q, limit=limit)]


@pytest.mark.parametrize("world_only", [True, False])
@pytest.mark.parametrize("limit", [1, 2, 5, 20])
def test_facts_ranked_in_process_is_the_fts5_answer(brain, monkeypatch, world_only, limit):
    for arm, entity in (("recent", None), ("entity", "people/p1")):
        f = FactFilter(arm, now_ms(), world_only, True, limit, entity_slug=entity)
        for q in QUERIES:
            query = SearchQuery.of(query_terms(q), "any")
            brain.facts_ranked(S, f, query, limit=limit)  # the first ranked query of a brain goes to FTS5
            assert _warm(brain, world_only)
            got = [(r["id"], r["score"]) for r in brain.facts_ranked(S, f, query, limit=limit)]
            assert got == _fts5_only(monkeypatch, brain, f, query, limit), (arm, q)


def _ranked_ids(brain, q: str, *, world_only: bool) -> list[int]:
    f = FactFilter("recent", now_ms(), world_only, True, 20)
    query = SearchQuery.of(query_terms(q), "any")
    brain.facts_ranked(S, f, query, limit=20)
    assert _warm(brain, world_only)
    return [r["id"] for r in brain.facts_ranked(S, f, query, limit=20)]


def test_a_write_by_another_connection_is_seen_by_the_next_query(runtime, brain, monkeypatch, tmp_path):
    before = _ranked_ids(brain, "zeppelin", world_only=False)
    assert before == []
    other = Runtime(runtime.home)  # another brain object: its own connection to the same file
    try:
        Client(other.local_dispatcher()).ok("remember", fact="a zeppelin over the lake", provenance="t")
    finally:
        other.close()
    f = FactFilter("recent", now_ms(), False, True, 20)
    query = SearchQuery.of(query_terms("zeppelin lake"), "any")
    got = [(r["id"], r["score"]) for r in brain.facts_ranked(S, f, query, limit=20)]
    assert got and got == _fts5_only(monkeypatch, brain, f, query, 20)
    assert brain.fact(got[0][0])["fact"] == "a zeppelin over the lake"


def test_a_write_on_the_same_connection_and_a_rewrite_of_terms_are_seen(runtime, brain, monkeypatch):
    _ranked_ids(brain, "comet", world_only=False)
    Client(runtime.local_dispatcher()).ok("remember", fact="one more comet", provenance="t")
    f = FactFilter("recent", now_ms(), False, True, 20)
    query = SearchQuery.of(["comet"], "any")
    assert [(r["id"], r["score"]) for r in brain.facts_ranked(S, f, query, limit=20)] == _fts5_only(monkeypatch, brain, f, query, 20)
    # An old fact's terms rewritten (what a migration's refill does): not an append, so everything is read again.
    raw = sqlite3.connect(runtime.home.root / "brain.db")
    raw.execute("UPDATE facts SET search_terms = 'comet comet zebra' WHERE id = 4")
    raw.commit()
    raw.close()
    for q in (["comet"], ["zebra"], ["lake"]):
        query = SearchQuery.of(q, "any")
        assert [(r["id"], r["score"]) for r in brain.facts_ranked(S, f, query, limit=20)] == _fts5_only(monkeypatch, brain, f, query, 20)
    assert [r["id"] for r in brain.facts_ranked(S, f, SearchQuery.of(["zebra"], "any"), limit=20)] == [4]


def test_private_facts_never_reach_an_untrusted_caller_through_warm_postings(runtime, brain):
    private = {i + 1 for i in range(len(TEXTS)) if i % 4 == 1}
    remote = Client(runtime.mcp_dispatcher("full"))
    remote.ok("recall", query="comet lake")  # the postings are now loaded, private facts' terms among them
    seen = [f["id"] for f in remote.ok("recall", query="comet lake")["facts"]]
    assert seen and not private & set(seen)
    assert 1 in seen and 9 in seen
    # Another connection makes a shown fact private and forgets another: the index does not change,
    # the postings stay as they were, and the next untrusted recall shows neither.
    raw = sqlite3.connect(runtime.home.root / "brain.db")
    raw.execute("UPDATE facts SET visibility = 'private' WHERE id = 1")
    raw.execute("UPDATE facts SET expired_at = 1 WHERE id = 9")
    raw.commit()
    raw.close()
    after = [f["id"] for f in remote.ok("recall", query="comet lake")["facts"]]
    assert after and not (private | {1, 9}) & set(after)
    mine = [f["id"] for f in Client(runtime.local_dispatcher()).ok("recall", query="comet lake")["facts"]]
    assert 1 in mine and 2 in mine and 9 not in mine  # the owner still sees private facts; a forgotten one is gone


def test_ranking_among_given_facts_is_the_whole_ranking_restricted_to_them(brain):
    postings = FactPostings()
    assert postings.refresh(brain.db)
    for q in QUERIES:
        terms = query_terms(q)
        for among in ([1, 2, 3], [11, 1, 11, 9, 404], list(range(1, 12))[::-1], []):
            assert postings.ranked_among(terms, among) == [hit for hit in postings.ranked(terms) if hit[1] in among], (q, among)
