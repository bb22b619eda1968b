"""The browse store's reads, called directly, on every backend: the rows the CLI and the inspector show.

`browse_store.BrowseStore` is written once; each backend supplies only its SQL pieces
(`Dialect`'s browse section). These pin what the reads answer, row for row and type for type
(counts are ints on both), so a dialect piece that drifts fails next to the read it feeds. The
audited edits (restore, visibility, moves) are pinned in test_fact_edits.py and test_brain_stores.py.
"""

from __future__ import annotations

import pytest

from memverbs.server.brain.base import FactFilter, NewFact, PageDraft

S = "default"
NOW = 2_000_000_000_000  # ahead of any server clock: Postgres records a fact at the later of the two
ALICE = "people/alice"


@pytest.fixture
def brain(runtime):
    return runtime.brain()


def fact(brain, text: str, at: int, *, entity: str | None = ALICE, visibility: str = "world", kind: str = "preference",
         provenance: str = "test", valid_until: int | None = None) -> int:
    return brain.insert_fact(S, NewFact(fact=text, fact_norm=text.lower(), kind=kind, entity_slug=entity,
                                        visibility=visibility, provenance=provenance, valid_until=valid_until), at)


def page(brain, slug: str, title: str, at: int, *, type_: str = "person", visibility: str = "world") -> None:
    draft = PageDraft(slug=slug, title=title, type=type_, body=f"# {title}\n", frontmatter={"title": title},
                      summary=None, visibility=visibility, aliases=[])
    brain.save_page(S, slug, lambda current: draft, at)


@pytest.fixture
def grown(brain):
    """Alice's page and three facts (one private, one forgotten); Bob's private project page with
    none; Carol, facts only."""
    page(brain, ALICE, "Alice", NOW)
    fact(brain, "Alice drinks tea", NOW + 1)
    fact(brain, "Alice's door code is 4321", NOW + 2, visibility="private")
    brain.expire_fact(fact(brain, "Alice drinks coffee", NOW + 3), NOW + 4, "she switched")
    page(brain, "projects/bob", "Bob", NOW + 5, type_="project", visibility="private")
    fact(brain, "Carol runs the build", NOW + 10, entity="people/carol")
    return brain


def shown(rows) -> list[tuple]:
    return [(r["slug"], r["title"], r["has_page"], r["facts"], r["active"], r["private"], r["last_touched"]) for r in rows]


CAROL = ("people/carol", None, 0, 1, 1, 0, NOW + 10)
BOB = ("projects/bob", "Bob", 1, 0, 0, 0, NOW + 5)
ALICE_ROW = (ALICE, "Alice", 1, 3, 2, 1, NOW + 3)


def test_entities_are_every_page_and_fact_entity_most_recently_touched_first(grown):
    rows = grown.entities(S, NOW + 100)
    assert shown(rows) == [CAROL, BOB, ALICE_ROW]
    assert all(type(v) is int for r in rows for v in (r["has_page"], r["facts"], r["active"], r["private"], r["last_touched"]))
    assert [r["visibility"] for r in rows] == [None, "private", "world"]
    assert shown(grown.entities(S, NOW + 100, with_page=False)) == [CAROL]
    assert shown(grown.entities(S, NOW + 100, with_page=True)) == [BOB, ALICE_ROW]
    assert shown(grown.entities(S, NOW + 100, type_="project")) == [BOB]
    assert shown(grown.entities(S, NOW + 100, prefix="people/")) == [CAROL, ALICE_ROW]
    assert shown(grown.entities(S, NOW + 100, with_page=True, prefix="people/")) == [ALICE_ROW]


def test_an_entity_window_is_one_page_by_slug_and_the_total(grown):
    total, rows = grown.entity_window(S, NOW + 100, limit=2)
    assert total == 3 and shown(rows) == [ALICE_ROW, CAROL]
    assert all(type(r["has_page"]) is int for r in rows)
    total, rows = grown.entity_window(S, NOW + 100, offset=2, limit=2)
    assert total == 3 and shown(rows) == [BOB]
    assert grown.entity_window(S, NOW + 100, offset=5) == (3, [])
    assert grown.entity_window(S, NOW + 100, search="nobody") == (0, [])
    # A title or a slug, case-insensitively.
    total, rows = grown.entity_window(S, NOW + 100, search=" BOB ")
    assert total == 1 and shown(rows) == [BOB]
    total, rows = grown.entity_window(S, NOW + 100, search="PEOPLE/")
    assert total == 2 and shown(rows) == [ALICE_ROW, CAROL]


def test_the_window_orders_slugs_bytewise_on_every_backend(brain):
    slugs = ["t/a-z", "t/a/b", "t/ab", "t/B"]  # punctuation and case: a locale's collation orders these otherwise
    for i, slug in enumerate(slugs):
        fact(brain, f"fact {i}", NOW + i, entity=slug)
    page(brain, "t/a", "A", NOW)
    total, rows = brain.entity_window(S, NOW + 100, limit=10)
    expected = sorted([*slugs, "t/a"], key=lambda s: s.encode())
    assert total == 5 and [r["slug"] for r in rows] == expected


def test_fact_only_entities_ending_a_slug_are_found_longest_first(brain):
    fact(brain, "one", NOW, entity="c")
    fact(brain, "two", NOW, entity="b/c")
    fact(brain, "three", NOW + 1, entity="b/c")
    assert brain.fact_only_slugs_ending(S, "a/b/c") == [("b/c", 2), ("c", 1)]
    page(brain, "c", "C", NOW + 2)  # a live page: its facts are filed where they belong
    assert brain.fact_only_slugs_ending(S, "a/b/c") == [("b/c", 2)]
    assert brain.fact_only_slugs_ending(S, "c") == []


def test_stats_count_what_the_brain_holds(grown):
    fact(grown, "Alice is on call this week", NOW + 20, valid_until=NOW + 30)
    page(grown, "people/dora", "Dora", NOW + 40)
    grown.delete_page(S, "people/dora", NOW + 41, allow_private=True)
    grown.add_link(S, ALICE, "projects/bob", "works_on", "manual", None, NOW + 42, allow_private=True)
    stats = grown.stats(S, NOW + 100)
    assert {k: v for k, v in stats.items() if k not in ("brain_bytes", "text_vectors", "fact_vectors", "chunks")} == {
        "pages": 2, "private_pages": 1, "deleted_pages": 1,
        "facts": 5, "active_facts": 3, "expired_facts": 1, "superseded_facts": 0, "private_facts": 1, "lapsed_facts": 1,
        "entities": 3, "links": 1, "aliases": 0, "timeline_entries": 0,
        "last_page_write": NOW + 42, "last_fact_write": NOW + 20,
    }
    assert all(type(v) is int for v in stats.values())
    assert stats["brain_bytes"] > 0


def test_backlinks_come_from_live_pages_and_timelines_newest_first(grown):
    page(grown, "people/dora", "Dora", NOW)
    grown.add_link(S, "projects/bob", ALICE, "works_with", "manual", "pairs on the build", NOW + 6, allow_private=True)
    grown.add_link(S, "people/dora", ALICE, "knows", "manual", None, NOW + 7, allow_private=True)
    assert [tuple(r) for r in grown.backlinks(S, ALICE, 10)] == [
        ("people/dora", "Dora", "world", "knows", "manual", None, NOW + 7),
        ("projects/bob", "Bob", "private", "works_with", "manual", "pairs on the build", NOW + 6),
    ]
    assert [r["slug"] for r in grown.backlinks(S, ALICE, 1)] == ["people/dora"]
    grown.delete_page(S, "people/dora", NOW + 8, allow_private=True)
    assert [r["slug"] for r in grown.backlinks(S, ALICE, 10)] == ["projects/bob"]
    grown.add_timeline_entry(S, ALICE, "2026-01-02", "joined", "the build team", NOW + 9, allow_private=True)
    grown.add_timeline_entry(S, ALICE, "2026-03-04", "moved", None, NOW + 10, allow_private=True)
    assert [tuple(r) for r in grown.timeline_entries(S, ALICE, 10)] == [
        ("2026-03-04", "moved", None, "manual", NOW + 10), ("2026-01-02", "joined", "the build team", "manual", NOW + 9),
    ]


def test_the_facts_window_pages_through_recall_with_its_grep(grown):
    fact(grown, "Alice takes TEA with honey", NOW + 5)
    about = FactFilter(arm="entity", now=NOW + 100, world_only=False, active_only=True, limit=10, entity_slug=ALICE)
    assert grown.fact_count(S, about) == 3
    assert grown.fact_count(S, about, grep="Tea") == 2
    assert [r["fact"] for r in grown.fact_window(S, about, 0, grep="tea")] == ["Alice takes TEA with honey", "Alice drinks tea"]
    assert [r["fact"] for r in grown.fact_window(S, about, 1, grep="tea")] == ["Alice drinks tea"]
    assert grown.fact_count(S, about, grep="50%") == 0  # a literal % is a character, not a pattern


def test_the_live_feed_lists_fact_changes_newest_change_first(grown):
    fact(grown, "Alice joined the build team", NOW + 50, kind="event", provenance="Stand-up NOTES")
    code = grown.fact_changes(S, 0, visibility="private")[0]
    assert code["fact"] == "Alice's door code is 4321"
    grown.set_fact_visibility(S, code["id"], "world", widen=True, reason="not secret", actor="test", now=NOW + 70)

    def feed(after: int, **filters) -> list[tuple]:
        return [(r["fact"], r["changed_at"]) for r in grown.fact_changes(S, after, **filters)]

    assert feed(NOW + 3) == [
        ("Alice's door code is 4321", NOW + 70),  # made world: its moment is in fact_audit
        ("Alice joined the build team", NOW + 50),
        ("Carol runs the build", NOW + 10),
        ("Alice drinks coffee", NOW + 4),  # forgotten
    ]
    assert feed(NOW + 3, limit=2) == [("Alice's door code is 4321", NOW + 70), ("Alice joined the build team", NOW + 50)]
    assert feed(0, entity="people/carol") == [("Carol runs the build", NOW + 10)]
    assert feed(0, kind="event") == [("Alice joined the build team", NOW + 50)]
    assert feed(0, provenance="stand-up notes") == [("Alice joined the build team", NOW + 50)]
    assert feed(0, visibility="private") == []
    assert feed(NOW + 3, until=NOW + 10) == [("Alice's door code is 4321", NOW + 70), ("Carol runs the build", NOW + 10),
                                             ("Alice drinks coffee", NOW + 4)]


def test_the_live_feed_lists_page_writes_and_deletions_newest_first(grown):
    page(grown, "people/dora", "Dora", NOW + 20)
    grown.delete_page(S, "people/dora", NOW + 30, allow_private=True)

    def feed(after: int, **filters) -> list[tuple]:
        return [(r["slug"], r["changed_at"], r["deleted_at"]) for r in grown.page_changes(S, after, **filters)]

    assert feed(NOW) == [("people/dora", NOW + 30, NOW + 30), ("projects/bob", NOW + 5, None), (ALICE, NOW, None)]
    assert feed(NOW + 1, limit=1) == [("people/dora", NOW + 30, NOW + 30)]
    assert feed(0, visibility="private") == [("projects/bob", NOW + 5, None)]
    assert feed(0, entity=ALICE) == [(ALICE, NOW, None)]
    assert feed(0, until=NOW + 5) == [("projects/bob", NOW + 5, None), (ALICE, NOW, None)]
