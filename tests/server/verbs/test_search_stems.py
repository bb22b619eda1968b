"""Page search finds a word's inflections, on every backend, without widening what a caller sees.

A question's word is asked for as itself or as a word beginning with its stem ("turtles" finds a
page that says "turtle"); for an untrusted caller a hit counts only when its world view holds a
word of the same stem, so a private facts-fence row is never the reason a page comes back, and a
word that merely begins with the stem ("turtleneck") is no match. Evidence stays on exact words.
"""

from __future__ import annotations

from helpers import page

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.postgres_dialect import tsquery
from memverbs.server.brain.sqlite_dialect import fts5_match
from memverbs.server.verbs.search import _keyword_queries, stem_prefix


def slugs(client, query: str, tool: str = "recall") -> list[str]:
    return [r["slug"] for r in client.ok(tool, query=query)["results"]]


def test_an_inflected_word_finds_the_page(local, remote):
    page(local, "notes/pets", "Pets", body="Nate keeps a turtle in a tank and painted it yesterday.")
    page(local, "notes/other", "Other", body="Nothing about animals here.")
    for client in (local, remote):
        assert slugs(client, "How many turtles does Nate have?")[:1] == ["notes/pets"]
        assert slugs(client, "what is he painting")[:1] == ["notes/pets"]
        assert slugs(client, "turtles", tool="search")[:1] == ["notes/pets"]


def test_evidence_stays_on_exact_words(remote, local):
    page(local, "notes/pets", "Pets", body="Nate keeps a turtle in a tank.")
    [hit] = remote.ok("recall", query="turtles")["results"]
    # Found through its stem only: no exact word of the query is on the page, so the create_safety is no stronger than "unknown".
    assert (hit["slug"], hit["evidence"], hit["create_safety"]) == ("notes/pets", "keyword_exact", "unknown")
    [exact] = remote.ok("recall", query="turtle")["results"]
    assert (exact["evidence"], exact["create_safety"]) == ("keyword_exact", "probable")


def test_a_private_row_is_never_why_a_page_is_found_by_stem(local, remote):
    body = "Plain world prose about a tank.\n\n<!-- facts -->\n- [private] the turtles are hidden here\n<!-- /facts -->\n"
    page(local, "notes/hidden", "Hidden", body=body)
    assert slugs(remote, "turtle") == []
    assert slugs(remote, "turtle tank") == ["notes/hidden"]  # found by its world word; the snippet is the world's
    assert "turtles" not in str(remote.ok("recall", query="turtle tank")["results"])
    assert slugs(local, "turtle") == ["notes/hidden"]  # the owner may see the row it matched on


def test_a_word_that_only_begins_with_the_stem_is_no_match_for_an_untrusted_caller(local, remote):
    page(local, "notes/wear", "Wear", body="A green turtleneck sweater.")
    assert slugs(remote, "turtles") == []


def test_the_queries_spell_the_prefix_per_backend():
    assert stem_prefix("turtles") == "turtl" and stem_prefix("pets") == "" and stem_prefix("北京") == ""
    every, some = _keyword_queries(["how", "big", "turtles", "pets"])
    assert every == SearchQuery(("big", "turtles", "pets"), "all")  # every term: the exact words
    assert fts5_match(every) == '"big" AND "turtles" AND "pets"'
    assert fts5_match(SearchQuery.of(["turtles", "big"], "all", ["turtl", ""])) == '("turtles" OR "turtl"*) AND "big"'
    assert fts5_match(some) == '"big" OR ("turtles" OR "turtl"*) OR "pets"'
    assert tsquery(some) == "'big' | ('turtles' | 'turtl':*) | 'pets'"
    assert fts5_match(SearchQuery.of(["a", "b"], "title_phrase", ["x", "y"])) == 'title : "a b"'
