"""No oracle through ranking: what an untrusted caller gets, and in which order, is what it would get if
the private rows it may not read did not exist.

A world page can hold private facts-fence rows; a brain holds private pages and facts. Ranked on every
word of the index, a world page would move up or down with the words of a row the caller cannot read:
a decoy tuned to sit beside it tells which guess is in the row. So each test compares a brain with the
private material against the same brain without it (`twin`), on both backends: the untrusted answers
must be equal, order and all.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from helpers import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.context import Caller
from memverbs.server.dispatch import Dispatcher
from memverbs.server.pages.markdown import without_private_rows


class Side:
    """One brain and its two callers for one source: the trusted writer and an untrusted reader."""

    def __init__(self, brain, source: str) -> None:
        self.writer = Client(Dispatcher.local(source, lambda: brain))
        self.reader = Client(Dispatcher(Caller.mcp(source), "full", lambda: brain))

    def search(self, query: str) -> list[str]:
        return [r["slug"] for r in self.reader.ok("search", query=query, limit=20)["results"]]

    def recall(self, query: str) -> list[str]:
        body = self.reader.ok("recall", query=query, limit=20)
        return [r["slug"] for r in body.get("pages", [])] + [f["fact"] for f in body.get("facts", [])]


@pytest.fixture
def twin(tmp_path: Path, runtime, brain_backend, other_brain_url):
    """(the home's brain, a second brain of the same backend): the one with private material, the one without."""
    from memverbs.server.brain.factory import BrainLocation, open_brain

    where = BrainLocation("postgres", url=other_brain_url) if other_brain_url else BrainLocation("sqlite", path=tmp_path / "twin.db")
    other = open_brain(where, create=other_brain_url is None)
    try:
        yield runtime.brain(), other
    finally:
        with contextlib.suppress(Exception):
            other.close()


TARGET = "# Target\nalpha beta gamma.\n<!-- facts -->\n- open row\n- [private] {secret} {secret} {secret}\n<!-- /facts -->\n"
GUESSES = ("quartz", "onyx", "topaz", "jade")


def test_a_tuned_decoy_learns_nothing_of_a_private_row(twin):
    """The attack the issue found (4 of 4 guesses right): decoys with ever more `alpha` around a world
    page whose private row holds the secret; the secret's guess lifts the page past them."""
    with_rows, _ = twin
    side = Side(with_rows, "oracle")
    side.writer.ok("put_page", slug="notes/target", content=TARGET.format(secret="quartz"))
    for k in range(1, 7):
        side.writer.ok("put_page", slug=f"notes/decoy-{k}", content=f"# Decoy {k}\n{' '.join(['alpha'] * k)} filler words here.\n")
    orders = {guess: side.search(f"alpha {guess}") for guess in GUESSES}
    unknown = side.search("alpha zzzunknown")
    assert all(order == unknown for order in orders.values()), orders  # every guess ranks as a word nobody wrote
    assert "notes/target" in unknown


@st.composite
def brains(draw):
    """Pages and facts: world pages with and without private rows (and continuation lines), private pages,
    world and private facts, over a small vocabulary so words collide; and the same without private material."""
    vocab = ["alpha", "beta", "gamma", "delta", "onyx", "quartz"]
    words = st.lists(st.sampled_from(vocab), min_size=1, max_size=6).map(" ".join)
    pages = []
    for i in range(draw(st.integers(1, 5))):
        world_lines = draw(st.lists(words, min_size=1, max_size=3))
        private_rows = draw(st.lists(st.tuples(words, st.booleans()), max_size=2))
        private_page = draw(st.booleans()) and i > 0
        fence = "".join(f"- {w}\n" for w in world_lines[1:])
        rows = "".join(f"- [private] {w}\n" + (f"  {w} again\n" if more else "") for w, more in private_rows)
        body = f"# Page {i}\n{world_lines[0]}\n<!-- facts -->\n{fence}{rows}<!-- /facts -->\n"
        clean = f"# Page {i}\n{world_lines[0]}\n<!-- facts -->\n{fence}<!-- /facts -->\n"
        assert without_private_rows(body) == clean  # the twin is what the world view says
        pages.append((f"notes/p{i}", body, clean, private_page))
    facts = draw(st.lists(st.tuples(words, st.sampled_from(["world", "private"])), max_size=4))
    queries = draw(st.lists(st.lists(st.sampled_from(vocab), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=3))
    return pages, facts, queries


COUNTER = iter(range(10**6))


def wipe(*brains) -> None:
    """Every page and fact gone, so an example starts from two empty brains (FTS5's statistics span sources)."""
    for brain in brains:
        with brain.write() as db:
            for table in ("fact_vectors", "fact_moves", "fact_audit", "facts", "aliases", "links", "timeline", "chunks",
                          "page_versions", "pages"):
                db.execute(f"DELETE FROM {table}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=brains())
def test_untrusted_answers_are_those_of_the_brain_without_its_private_rows(twin, case):
    pages, facts, queries = case
    wipe(*twin)
    source = f"prop{next(COUNTER)}"
    with_rows, without = (Side(brain, source) for brain in twin)
    for slug, body, clean, private_page in pages:
        if private_page:
            with_rows.writer.ok("put_page", slug=slug, content="---\nvisibility: private\n---\n" + body)
        else:
            with_rows.writer.ok("put_page", slug=slug, content=body)
            without.writer.ok("put_page", slug=slug, content=clean)
    for text, visibility in facts:
        with_rows.writer.ok("remember", fact=f"fact {text}", provenance="t", entity="notes/p0", visibility=visibility)
        if visibility == "world":
            without.writer.ok("remember", fact=f"fact {text}", provenance="t", entity="notes/p0")
    for query in queries:
        assert with_rows.search(query) == without.search(query), query
        assert with_rows.recall(query) == without.recall(query), query


def test_a_trusted_caller_still_finds_its_private_rows(twin):
    brain, _ = twin
    side = Side(brain, "trusted")
    side.writer.ok("put_page", slug="notes/target", content=TARGET.format(secret="quartz"))
    assert side.writer.ok("search", query="quartz")["results"][0]["slug"] == "notes/target"
    assert side.search("quartz") == []  # the untrusted caller does not find the page by the row's word
    assert "quartz" not in json.dumps(side.reader.ok("get_page", slug="notes/target"))


def test_private_facts_do_not_make_a_word_common(twin):
    """`beta` is the rarer word among the world facts, so a fact holding it leads; three private facts holding
    it would make it the commoner one and put the `alpha` facts first, were they counted."""
    wipe(*twin)
    with_rows, without = (Side(brain, "rare") for brain in twin)
    for side in (with_rows, without):
        for fact in ("alpha one", "alpha two", "beta three"):
            side.writer.ok("remember", fact=fact, provenance="t", entity="people/x")
    for i in range(3):
        with_rows.writer.ok("remember", fact=f"beta secret {i}", provenance="t", entity="people/y", visibility="private")
    for _ in range(2):  # the second query ranks through the postings a process keeps (sqlite_fact_rank.py)
        assert with_rows.recall("alpha beta") == without.recall("alpha beta")
    assert without.recall("alpha beta")[0] == "beta three"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(facts=st.lists(st.tuples(st.lists(st.sampled_from(["alpha", "beta", "gamma", "onyx"]), min_size=1, max_size=5).map(" ".join),
                                st.sampled_from(["world", "private"])), min_size=2, max_size=12),
       query=st.lists(st.sampled_from(["alpha", "beta", "gamma", "onyx"]), min_size=1, max_size=3).map(" ".join))
def test_untrusted_fact_ranking_is_that_of_the_brain_without_private_facts(twin, facts, query):
    """BM25 reads the corpus (how many facts hold a word, how long facts are): private facts must not count."""
    wipe(*twin)
    source = f"facts{next(COUNTER)}"
    with_rows, without = (Side(brain, source) for brain in twin)
    for i, (text, visibility) in enumerate(facts):
        with_rows.writer.ok("remember", fact=f"{text} n{i}", provenance="t", entity=f"people/e{i % 3}", visibility=visibility)
        if visibility == "world":
            without.writer.ok("remember", fact=f"{text} n{i}", provenance="t", entity=f"people/e{i % 3}")
    assert with_rows.recall(query) == without.recall(query)
