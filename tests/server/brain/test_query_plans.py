"""Every hot query uses its intended index on a brain grown through the tools and never analysed.

Without `sqlite_stat1` SQLite's planner guesses, and on a brain grown through
put_page / add_link / remember its guesses used to be full scans of a source's
aliases, links or facts (docs/architecture.md, "Query plans"). Each hot query
is listed once below with the index each of its tables must be searched
through; the SQL is captured from the brain method itself (not copied here), so
a change to a method's SQL is checked as written. The same plans must hold once
the brain has been analysed: statistics may not make a plan worse either.

SQLite's planner only: Postgres keeps statistics itself (autovacuum analyses), and
its plans are checked by the backend benchmarks instead.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from helpers import Client, init_home, page

from memverbs.server.brain.base import FactFilter, NewFact, SearchQuery
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms

S = "default"
PAGES = 60

# (what, call on the brain, {table or alias in the plan: how it must be searched})
# "rowid" = by primary key, "primary key" = a WITHOUT ROWID table's, "fts" = the FTS5 index; anything else
# is an index name (a tuple: any of them).
HOT = [
    ("page by slug", lambda b, now: b.page(S, "people/p-1"), {"pages": "sqlite_autoindex_pages_1"}),
    ("pages by slugs", lambda b, now: b.pages_by_slugs(S, ["people/p-1", "people/p-2"], allow_private=False),
     {"pages": "sqlite_autoindex_pages_1"}),
    ("alias resolution", lambda b, now: b.alias_slugs(S, "pp1"), {"aliases": "aliases_lookup"}),
    ("title resolution", lambda b, now: b.pages_titled(S, "person 1", allow_private=False), {"pages": "pages_title_key"}),
    ("slug-suffix resolution", lambda b, now: b.pages_with_suffix(S, "p-1", allow_private=False),
     {"pages": "pages_slug_rev"}),
    ("slug-prefix listing", lambda b, now: b.pages_with_prefix(S, "people/", allow_private=False),
     {"pages": "sqlite_autoindex_pages_1"}),
    ("aliases of a page", lambda b, now: b.aliases_of(S, "people/p-1"), {"aliases": "sqlite_autoindex_aliases_1"}),
    ("aliased among candidates", lambda b, now: b.aliased_slugs(S, ["people/p-1", "people/p-2"], "pp1"),
     {"aliases": ("aliases_lookup", "sqlite_autoindex_aliases_1")}),  # both pin all three columns
    ("timeline of a page", lambda b, now: b.timeline_newest(S, "people/p-1", private_rows=False), {"timeline": "timeline_slug"}),
    ("out-edges", lambda b, now: b.edges_out(S, "people/p-1", 10, allow_private=False, private_rows=False),
     {"l": "sqlite_autoindex_links_1", "t": "sqlite_autoindex_pages_1"}),
    ("in-edges", lambda b, now: b.edges_in(S, "people/p-1", 10, allow_private=False, private_rows=False),
     {"l": "links_in", "f": "sqlite_autoindex_pages_1"}),
    ("backlink count", lambda b, now: b.backlink_count(S, "people/p-1", allow_private=False, private_rows=False),
     {"l": "links_in", "f": "sqlite_autoindex_pages_1"}),
    ("links of a page", lambda b, now: b.page_links(S, "people/p-1", allow_private=False, private_rows=False),
     {"l": "sqlite_autoindex_links_1", "t": "sqlite_autoindex_pages_1"}),
    # an untrusted caller reads the world view's index (sqlite_schema.WORLD_INDEX), a trusted one the whole index
    ("keyword search", lambda b, now: b.keyword_search(S, SearchQuery.of(["person"]), limit=10, allow_private=False),
     {"pages_world_fts": "fts", "p": "rowid"}),
    ("keyword search, no snippets", lambda b, now: b.keyword_search(S, SearchQuery.of(["person"]), limit=10, allow_private=False,
                                                                    snippets=False),
     {"pages_world_fts": "fts", "p": "rowid"}),
    ("keyword search, trusted", lambda b, now: b.keyword_search(S, SearchQuery.of(["person"]), limit=10, allow_private=True,
                                                                rows_of=1),
     {"pages_fts": "fts", "p": "rowid"}),
    ("delta: changed pages", lambda b, now: b.changed_pages(S, 0, None, limit=51, allow_private=False),
     {"pages": "pages_changed"}),
    ("delta: changed pages after a cursor", lambda b, now: b.changed_pages(S, 0, "people/p-1", limit=51, allow_private=False),
     {"pages": "pages_changed"}),
    ("delta: facts recorded after", lambda b, now: b.facts_recorded_after(S, 0, world_only=True, now=now, limit=50),
     {"facts": "facts_created"}),
    ("delta: facts recorded in one ms", lambda b, now: b.facts_recorded_at(S, now, world_only=True, now=now, limit=50),
     {"facts": "facts_created"}),
    ("card: commitments", lambda b, now: b.active_commitments(S, "people/p-1", world_only=True, now=now, limit=3),
     {"facts": "facts_entity"}),
    ("card: fact count", lambda b, now: b.active_fact_count(S, "people/p-1", world_only=True, now=now),
     {"facts": "facts_entity"}),
    ("pack: facts of the entities", lambda b, now: b.entity_facts(S, ["people/p-1", "people/p-2", "people/p-3"],
                                                                  world_only=True, now=now, limit=20),
     {"facts": "facts_entity"}),
    ("pack: facts of a session", lambda b, now: b.session_facts(S, "s1", world_only=True, now=now, limit=20),
     {"facts": "facts_session"}),
    ("pack: recent facts", lambda b, now: b.recent_facts(S, now - 86_400_000, world_only=True, now=now, limit=20),
     {"facts": "facts_created"}),
    ("pack: a project's facts", lambda b, now: b.project_facts(S, "projects/x", world_only=True, now=now, limit=30),
     {"facts": "facts_project"}),
    ("pack: a project's statements", lambda b, now: b.project_statements(S, "projects/x", world_only=True, now=now, limit=30),
     {"facts": "facts_project_statements"}),
    ("recall: entity arm", lambda b, now: b.facts(S, FactFilter("entity", now, True, True, 20, entity_slug="people/p-1")),
     {"facts": "facts_entity"}),
    ("recall: session arm", lambda b, now: b.facts(S, FactFilter("session", now, True, True, 20, session_id="s1")),
     {"facts": "facts_session"}),
    ("recall: recent arm", lambda b, now: b.facts(S, FactFilter("recent", now, True, True, 20)),
     {"facts": "facts_event"}),
    ("recall: supersessions arm", lambda b, now: b.facts(S, FactFilter("supersessions", now, True, False, 20)),
     {"facts": "facts_superseded"}),
    ("recall: fact keyword search", lambda b, now: b.facts_matching(S, SearchQuery.of(["fact"]), world_only=True, now=now, since=None,
                                                                    until=None, limit=10),
     {"facts_world_fts": "fts", "f": "rowid"}),
    ("recall: facts ranked by a query", lambda b, now: b.facts_ranked(S, FactFilter("recent", now, True, True, 20),
                                                                       SearchQuery.of(["fact", "about"], "any"), limit=20),
     {"facts_world_fts": "fts", "facts": "rowid"}),
    ("recall: facts ranked by a query, trusted", lambda b, now: b.facts_ranked(S, FactFilter("recent", now, False, True, 20),
                                                                                SearchQuery.of(["fact", "about"], "any"), limit=20),
     {"facts_fts": "fts", "facts": "rowid"}),
    ("hook: standing entities", lambda b, now: b.recent_entity_slugs(S, limit=5), {"facts": "facts_created"}),
    ("remember: dedup check", lambda b, now: b.remember_fact(
        S, NewFact("fact 1 about p", "fact 1 about p", "fact", "people/p-1", "world", "t", None), now),
     {"facts": "facts_entity"}),
    ("delta: session cursor", lambda b, now: b.cursor(S, "local", "s1"), {"session_cursors": "sqlite_autoindex_session_cursors_1"}),
    ("reflex: the name index", lambda b, now: b.named_pages(S, ["person 1", "pp1", "p", "nobody here"], allow_private=False),
     {"n": "primary key", "p": "sqlite_autoindex_pages_1", "f": "facts_entity"}),  # f: an entity without a page
]

_STEP = re.compile(r"^(SEARCH|SCAN) (\S+)(?: USING (?:(?:COVERING )?INDEX (\S+)|(INTEGER PRIMARY KEY)|(PRIMARY KEY)))?( VIRTUAL TABLE)?")


def searched(db: sqlite3.Connection, sql: str) -> dict[str, str | None]:
    """{table or alias: index it is searched through} for one statement; None is a full scan."""
    out: dict[str, str | None] = {}
    made: set[str] = set()  # subqueries materialized first or run as co-routines: reading one back scans its few rows, not a table
    for row in db.execute("EXPLAIN QUERY PLAN " + sql):
        if row[3].startswith(("MATERIALIZE ", "CO-ROUTINE ")):
            made.add(row[3].split()[1])
        m = _STEP.match(row[3])
        if not m or m.group(2).startswith("(") or m.group(2) in made:  # a subquery or co-routine, not a table
            continue
        kind, table, index, rowid, key, virtual = m.groups()
        # A WITHOUT ROWID table searched (not scanned) through its primary key: "primary key".
        out[table] = "fts" if virtual else "rowid" if rowid else "primary key" if key and kind == "SEARCH" else index
    return out


def meets(plan: dict, expected: dict) -> bool:
    return plan.keys() == expected.keys() and all(
        plan[t] in (want if isinstance(want, tuple) else (want,)) for t, want in expected.items()
    )


def statements(brain, call, now: int) -> list[str]:
    seen: list[str] = []
    brain.db.set_trace_callback(seen.append)
    try:
        call(brain, now)
    finally:
        brain.db.set_trace_callback(None)
    return [s for s in seen if s.split(None, 1)[0].upper() in ("SELECT", "UPDATE", "DELETE")]


def grow(root) -> Runtime:
    """A brain grown a little through the tools, the way a user grows one: never analysed."""
    runtime = Runtime(init_home(root))
    local = Client(runtime.local_dispatcher())
    for i in range(PAGES):
        page(local, f"people/p-{i}", f"Person {i}", body=f"Works with [[people/p-{(i * 7) % PAGES}]].",
             aliases=[f"pp{i}"], type="person")
        local.ok("add_link", **{"from": f"people/p-{i}", "to": f"people/p-{(i * 3) % PAGES}", "link_type": "knows"})
        local.ok("add_timeline_entry", slug=f"people/p-{i}", date="2026-01-02", summary=f"met {i}")
        local.ok("remember", fact=f"fact {i} about p", entity=f"people/p-{i}", provenance="t", session_id="s1")
    local.ok("remember", fact="a commitment: ship it by friday", entity="people/p-1", provenance="t", kind="commitment")
    return runtime


@pytest.fixture(scope="module")
def brains(tmp_path_factory):
    fresh = grow(tmp_path_factory.mktemp("fresh") / "home")
    db = fresh.brain().db
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").fetchone()[0] == 0
    analysed = grow(tmp_path_factory.mktemp("analysed") / "home")
    analysed.brain().db.execute("ANALYZE")
    yield {"never analysed": fresh.brain(), "analysed": analysed.brain()}
    fresh.close()
    analysed.close()


@pytest.mark.parametrize("what,call,expected", HOT, ids=[h[0] for h in HOT])
@pytest.mark.parametrize("stats", ["never analysed", "analysed"])
def test_hot_query_uses_its_index(brains, what, call, expected, stats):
    brain = brains[stats]
    sqls = statements(brain, call, now_ms())
    assert sqls, f"{what}: the call ran no query"
    plans = [searched(brain.db, sql) for sql in sqls]
    assert any(meets(plan, expected) for plan in plans), f"{what}: expected {expected}, planned {plans}"
    for plan in plans:
        assert None not in plan.values(), f"{what}: a full scan in {plan}"


@pytest.mark.parametrize("stats", ["never analysed", "analysed"])
def test_the_hooks_change_check_reads_a_range_of_the_change_indexes(brains, stats):
    """The hooks' one-read change check (server/brain/plain.py) runs on every prompt with its own SQL: a
    range of pages_changed and facts_created from the session's cursor, never a walk of the source's pages."""
    from memverbs.server.brain.plain import CHANGED as _QUERY

    db = brains[stats].db
    plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + _QUERY.replace("?", "'x'"))]
    assert any(step.startswith("SEARCH p USING INDEX pages_changed (source_id=? AND updated_at>?)") for step in plan), plan
    assert any("facts_created (source_id=? AND created_at>?)" in step for step in plan), plan
