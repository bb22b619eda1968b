"""Migrations: named steps with a record table, idempotent, refusing a future schema."""

import re
import sqlite3
import subprocess
import sys

import pytest

from memverbs.server.brain import migrations, sqlite_migrate
from memverbs.server.brain.sqlite import SqliteBrain
from memverbs.server.errors import BrainError, BrainMissing


def test_fresh_brain_records_every_step(tmp_path):
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    assert brain.schema_status() == {"applied": [m.name for m in migrations.MIGRATIONS], "pending": [], "unknown": []}
    assert brain.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    brain.close()
    assert SqliteBrain.open(tmp_path / "b.db").schema_status()["pending"] == []


def test_missing_brain(tmp_path):
    with pytest.raises(BrainMissing) as exc:
        SqliteBrain.open(tmp_path / "none.db")
    assert "memverbs init" in exc.value.fix


def test_future_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "b.db"
    SqliteBrain.open(path, create=True).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO _migrations VALUES ('9999_from_the_future', 0)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(BrainError) as exc:
        SqliteBrain.open(path)
    assert "newer memverbs" in exc.value.message and "Upgrade" in exc.value.fix
    assert path.read_bytes() == before


def test_corrupt_brain_names_the_fix(tmp_path):
    path = tmp_path / "b.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(BrainError) as exc:
        SqliteBrain.open(path)
    assert "corrupt" in exc.value.message or "not a database" in exc.value.message
    assert exc.value.fix


def test_pending_steps_apply_on_open(tmp_path):
    path = tmp_path / "b.db"
    db = sqlite3.connect(path, isolation_level=None)
    sqlite_migrate.migrate(db)
    db.execute("DELETE FROM _migrations WHERE name = '0002_keyword_index'")
    db.executescript("DROP TABLE pages_fts; DROP TABLE facts_fts; DROP TRIGGER IF EXISTS pages_fts_ai;"
                     "DROP TRIGGER IF EXISTS pages_fts_ad; DROP TRIGGER IF EXISTS pages_fts_au;"
                     "DROP TRIGGER IF EXISTS facts_fts_ai; DROP TRIGGER IF EXISTS facts_fts_ad;")
    db.close()
    brain = SqliteBrain.open(path)
    assert brain.schema_status()["pending"] == []


def test_private_rows_step_marks_an_old_brains_mixed_rows_private(tmp_path, monkeypatch):
    """Before 0011, a page's private-row links and dates were stored like its world ones: on a page
    whose body holds a private row they are marked private (fail closed) until it is next written."""
    path = tmp_path / "b.db"
    db = sqlite3.connect(path, isolation_level=None)
    names = [m.name for m in migrations.MIGRATIONS]
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index("0011_private_rows")])
    sqlite_migrate.migrate(db)
    monkeypatch.undo()
    for i, (slug, body) in enumerate([("people/fenced", "<!-- facts -->\n- [Private] x [[people/t]]\n<!-- /facts -->\n"),
                                      ("people/plain", "See [[people/t]].\n")]):
        db.execute("INSERT INTO pages (source_id, slug, slug_rev, body, created_at, updated_at) VALUES ('s', ?, ?, ?, 1, 1)",
                   (slug, slug[::-1], body))
        db.execute("INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, created_at) "
                   "VALUES ('s', ?, 'people/t', 'references', 'markdown', 1)", (slug,))
        db.execute("INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, created_at) "
                   "VALUES ('s', ?, 'people/u', 'knows', 'manual', 1)", (slug,))
        db.execute("INSERT INTO timeline (source_id, slug, date, summary, origin, created_at) VALUES ('s', ?, '2026-01-0' || ?, 'x', 'markdown', 1)",
                   (slug, i + 1))
    db.close()
    brain = SqliteBrain.open(path)
    assert brain.schema_status()["pending"] == []
    links = {(r[0], r[1]): r[2] for r in brain.db.execute("SELECT from_slug, link_source, private_row FROM links")}
    assert links == {("people/fenced", "markdown"): 1, ("people/fenced", "manual"): 0,
                     ("people/plain", "markdown"): 0, ("people/plain", "manual"): 0}
    timeline = dict(brain.db.execute("SELECT slug, private_row FROM timeline").fetchall())
    assert timeline == {"people/fenced": 1, "people/plain": 0}
    brain.close()


def test_title_keys_are_filled_for_pages_written_before_them(brain_backend, brain_url, tmp_path):
    """0014_title_keys on a brain that has pages: each gets the key memverbs computes, on both backends."""
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation

    where = BrainLocation("postgres", url=brain_url) if brain_url else BrainLocation("sqlite", path=tmp_path / "b.db")
    undo = ("DROP INDEX pages_title_key", "ALTER TABLE pages DROP COLUMN title_key",
            "CREATE INDEX pages_title ON pages (source_id, lower(title)) WHERE deleted_at IS NULL",
            "DELETE FROM _migrations WHERE name = '0014_title_keys'")
    brain = open_brain(where, create=True)
    try:
        for n, title in enumerate(("Été 2024", "東京メモ", "Kubernetes")):
            brain.save_page("default", f"notes/p{n}", lambda _, n=n, title=title: _draft(f"notes/p{n}", title), 1)
    finally:
        brain.close()
    undo_step(where, undo)
    brain = open_brain(where)  # applies the pending step
    try:
        assert [r["slug"] for r in brain.pages_titled("default", "été 2024", allow_private=False)] == ["notes/p0"]
        assert [r["slug"] for r in brain.pages_titled("default", "東京メモ", allow_private=False)] == ["notes/p1"]
        assert [r["slug"] for r in brain.pages_titled("default", "kubernetes", allow_private=False)] == ["notes/p2"]
    finally:
        brain.close()


def test_the_name_index_is_filled_for_pages_written_before_it(brain_backend, brain_url, tmp_path):
    """0025_entity_names on a brain that has pages and aliases: each page is named by them, on both backends."""
    from memverbs.server.brain.base import NewFact
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation

    where = BrainLocation("postgres", url=brain_url) if brain_url else BrainLocation("sqlite", path=tmp_path / "b.db")
    brain = open_brain(where, create=True)
    try:
        brain.save_page("default", "people/alice-example", lambda _: _draft("people/alice-example", "Alice Example"), 1)
        brain.add_alias("default", "people/alice-example", "Ally", "ally", 2, allow_private=True)
        brain.save_page("team", "notes/k8s", lambda _: _draft("notes/k8s", "Kubernetes"), 1)
        brain.remember_fact("default", NewFact("Bob owns billing", "bob owns billing", "fact", "people/bob-marsh", "world",
                                               "test", None), 3)
    finally:
        brain.close()
    trigger = ("DROP TRIGGER facts_entity_name ON facts", "DROP TRIGGER facts_entity_name_moved ON facts",
               "DROP FUNCTION memverbs_fact_entity_name()") if brain_url \
        else ("DROP TRIGGER facts_entity_name", "DROP TRIGGER facts_entity_name_moved")
    undo_step(where, (*trigger, "DROP TABLE entity_names", "DELETE FROM _migrations WHERE name = '0025_entity_names'"))
    brain = open_brain(where)  # applies the pending step
    try:
        assert brain.named_in("default", "did Alice Example or ally call").slugs == ["people/alice-example"]
        assert brain.named_in("team", "kubernetes upgrade").slugs == ["notes/k8s"]
        assert brain.named_in("default", "kubernetes upgrade").slugs == []
        assert brain.named_in("default", "ask bob marsh").slugs == ["people/bob-marsh"]
    finally:
        brain.close()


def undo_step(where, undo: tuple[str, ...]) -> None:
    """Take a step back out of a brain (its SQL, then its record), as a brain from before it would be."""
    if where.backend == "postgres":
        import psycopg

        with psycopg.connect(where.url, autocommit=True) as conn:
            for sql in undo:
                conn.execute(sql)
    else:
        db = sqlite3.connect(where.path)
        db.executescript(";\n".join(undo))
        db.close()


def _draft(slug: str, title: str):
    from memverbs.server.brain.base import PageDraft

    return PageDraft(slug=slug, title=title, type=None, body="", frontmatter={}, summary=None, visibility="world",
                     aliases=[], links=[], timeline=[], markdown="")


# The names brains already record: a step is never renamed or dropped (a brain recording a name this
# code does not know is refused as a newer memverbs's), only added after these.
RECORDED = (
    "0001_core_tables", "0002_keyword_index", "0003_access_tokens", "0004_chunks_and_vectors", "0005_fact_moves",
    "0006_page_markdown", "0007_plan_indexes", "0008_markdown_sync_state", "0009_change_feed_indexes",
    "0010_fact_audit", "0011_private_rows", "0012_projects", "0013_oauth", "0014_title_keys", "0015_fact_terms",
    "0016_page_trigrams", "0017_page_history", "0018_people", "0019_folder_identity",
)


def test_step_names_are_the_ones_brains_record_in_order():
    names = [step.name for step in migrations.MIGRATIONS]
    assert names[: len(RECORDED)] == list(RECORDED)
    assert names == sorted(set(names))  # each once, and in the order the runners read them back (by name)


def test_the_one_read_that_finds_a_brain_current_knows_the_last_step(tmp_path):
    """`sqlite_migrate.current` spares a current brain's open the list of steps: it must say current
    for exactly the record the list makes, and defer to the list for anything else."""
    assert (len(migrations.MIGRATIONS), migrations.MIGRATIONS[-1].name) == (migrations.STEP_COUNT, migrations.LAST_STEP), (
        "a schema step was added: set STEP_COUNT and LAST_STEP above the list in server/brain/migrations.py")
    db = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    assert not sqlite_migrate.current(db)  # no record yet
    sqlite_migrate.migrate(db)
    assert sqlite_migrate.current(db)
    db.execute("INSERT INTO _migrations VALUES ('9999_from_the_future', 0)")
    assert not sqlite_migrate.current(db)
    db.execute("DELETE FROM _migrations WHERE name IN ('9999_from_the_future', '0002_keyword_index')")
    assert not sqlite_migrate.current(db)  # a step missing
    db.execute("INSERT INTO _migrations VALUES ('0002_keyword_index', 0)")
    db.execute(f"DELETE FROM _migrations WHERE name = '{migrations.MIGRATIONS[-1].name}'")
    db.execute("INSERT INTO _migrations VALUES ('9999_from_the_future', 0)")
    assert not sqlite_migrate.current(db)  # as many steps, but the last one is another's
    db.close()


def test_opening_a_current_brain_reads_no_step_list(tmp_path):
    """A hook opens the brain on every session start: a current one is recognised by one read, without
    building the list of steps or importing the schema and Postgres modules it is written in."""
    SqliteBrain.open(tmp_path / "b.db", create=True).close()
    code = ("import sys;from pathlib import Path;from memverbs.server.brain.sqlite import SqliteBrain;"
            "from memverbs.server.brain import migrations;"
            f"SqliteBrain.open(Path({str(tmp_path / 'b.db')!r})).close();"
            "print(sorted(m for m in sys.modules if m.endswith('.schema') or 'postgres' in m),"
            " 'MIGRATIONS' in vars(migrations))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "[] False"


def test_every_step_is_spelled_for_both_dialects():
    """Each step's SQL is written in the shared column-type vocabulary, which both dialects spell whole."""
    from memverbs.server.brain import postgres_schema, sqlite_schema

    assert sqlite_schema.COLUMN_TYPES.keys() == postgres_schema.COLUMN_TYPES.keys()
    for step in migrations.MIGRATIONS:
        for dialect in ("sqlite", "postgres"):
            work = step.work(dialect)
            for part in work:
                assert not isinstance(part, str) or not re.search(r"\{\w+\}", part), (step.name, dialect, part)
            # Only Postgres's trigram step and SQLite's GIN option and whole-brain steps are empty: each
            # has no twin on the other backend (migrations.py says why).
            assert work or (step.name, dialect) in {("0016_page_trigrams", "postgres"), ("0020_fact_ranking", "sqlite"),
                                                    ("0023_whole_brain", "sqlite")}


def test_each_backend_records_every_step_in_order(brain_backend, brain_url, tmp_path):
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation

    where = BrainLocation("postgres", url=brain_url) if brain_url else BrainLocation("sqlite", path=tmp_path / "b.db")
    brain = open_brain(where, create=True)
    try:
        names = [step.name for step in migrations.MIGRATIONS]
        assert brain.schema_status() == {"applied": names, "pending": [], "unknown": []}
    finally:
        brain.close()


def test_a_step_is_one_transaction_with_its_record(brain_backend, request, tmp_path, monkeypatch):
    """A step's SQL and its functions run in one transaction: when a later part fails, nothing of the
    step stays, its record included, and the next open applies it whole."""
    calls = []

    def boom(conn) -> None:
        calls.append(conn)
        raise RuntimeError("the fill failed")

    steps = (migrations.Step("0001_first", "CREATE TABLE first_t (x INTEGER); INSERT INTO first_t VALUES (1);"),
             migrations.Step("0002_second", "CREATE TABLE second_t (x INTEGER); INSERT INTO second_t VALUES (2);",
                             boom, "CREATE TABLE never_t (x INTEGER)"))
    monkeypatch.setattr(migrations, "MIGRATIONS", steps)
    if brain_backend == "sqlite":
        db = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
        migrate, url = sqlite_migrate.migrate, None
    else:
        from memverbs.server.brain import postgres_migrate
        from memverbs.server.brain.postgres_base import CONNECTION_KWARGS, BrainConnection

        server = request.getfixturevalue("pg")
        url = server.new_database(empty=True)
        db = BrainConnection.connect(url, **CONNECTION_KWARGS)
        migrate = postgres_migrate.migrate
    try:
        with pytest.raises(RuntimeError):
            migrate(db, "b")
        assert len(calls) == 1
        assert [r[0] for r in db.execute("SELECT name FROM _migrations")] == ["0001_first"]
        assert db.execute("SELECT x FROM first_t").fetchall()[0][0] == 1
        for table in ("second_t", "never_t"):
            with pytest.raises(Exception, match=table):
                db.execute(f"SELECT x FROM {table}")
    finally:
        db.close()
        if url:
            server.drop_database(url)


def test_a_script_runs_statement_by_statement():
    """SQLite runs a step's SQL one statement at a time inside the step's transaction (executescript
    would commit it first): a split never falls inside a quote, a comment or a trigger's body."""
    script = """
        CREATE TABLE t (x TEXT);  -- a comment; with a semicolon
        INSERT INTO t VALUES ('a;b');
        CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
            INSERT INTO t VALUES ('c'); INSERT INTO t VALUES ('d');
        END;
    """
    parts = list(sqlite_migrate.statements(script))
    assert len(parts) == 3 and "'a;b'" in parts[1] and parts[2].rstrip().endswith("END;")
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("BEGIN")
    for part in parts:
        db.execute(part)  # one statement each, or sqlite3 refuses it
    db.execute("INSERT INTO t VALUES ('e')")
    db.execute("COMMIT")
    assert [r[0] for r in db.execute("SELECT x FROM t ORDER BY rowid")] == ["a;b", "e", "c", "d"]


def test_a_postgres_brain_indexes_new_facts_at_once_and_keeps_the_ranking_totals(brain_backend, brain_url):
    """0020_fact_ranking: the facts' GIN index has no pending list for ranked queries to scan, and
    fact_totals holds BM25's corpus totals per visibility class, on a new brain and on one upgraded
    from before the step (its facts counted, its pending facts merged), and after writes."""
    if not brain_url:
        pytest.skip("a Postgres index option and table")
    import psycopg

    from memverbs.server.brain.base import NewFact
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation
    from memverbs.server.names import restatement_key

    where = BrainLocation("postgres", url=brain_url)
    option = "SELECT reloptions FROM pg_class WHERE relname = 'facts_search'"
    totals = "SELECT class, facts, terms FROM fact_totals WHERE facts > 0 ORDER BY class"
    counted = ("SELECT CASE WHEN visibility = 'world' THEN 0 ELSE owner END, count(*), sum(search_len) FROM facts "
               "GROUP BY 1 ORDER BY 1")

    def remember(brain, text: str, visibility: str = "world") -> int:
        new = NewFact(fact=text, fact_norm=restatement_key(text), kind="fact", entity_slug=None, visibility=visibility,
                      notability="medium", provenance="t", source_session=None, context=None, confidence=1.0,
                      valid_from=None, valid_until=None, project=None)
        return brain.insert_fact("default", new, 1)

    brain = open_brain(where, create=True)
    remember(brain, "comet over the lake")
    remember(brain, "a private comet note", "private")
    brain.close()
    with psycopg.connect(brain_url, autocommit=True) as conn:
        assert conn.execute(option).fetchone()[0] == ["fastupdate=off"]
        held = conn.execute(totals).fetchall()
        assert [r[:2] for r in held] == [(0, 1), (1, 1)] and held == conn.execute(counted).fetchall()
        for sql in ("ALTER INDEX facts_search RESET (fastupdate)", "DROP TABLE fact_totals",
                    "DROP FUNCTION memverbs_fact_totals() CASCADE", "DELETE FROM _migrations WHERE name = '0020_fact_ranking'"):
            conn.execute(sql)
    brain = open_brain(where)  # applies the pending step
    fact = remember(brain, "lake lake lake")
    brain.expire_fact(fact, 2, "gone")  # still counted: the index keeps expired facts
    brain.close()
    with psycopg.connect(brain_url, autocommit=True) as conn:
        assert conn.execute(option).fetchone()[0] == ["fastupdate=off"]
        conn.execute("UPDATE facts SET visibility = 'private' WHERE fact = 'comet over the lake'")
        held = conn.execute(totals).fetchall()
        assert [r[:2] for r in held] == [(0, 1), (1, 2)] and held == conn.execute(counted).fetchall()


def test_world_view_step_indexes_an_old_brains_pages_and_closes_what_a_blank_line_opened(tmp_path, monkeypatch):
    """0022 fills the world-view indexes from the pages and facts already there (private rows and private
    pages left out), and makes private a page stored world-visible because its frontmatter came after a
    blank line or a byte-order mark, as its writer meant."""
    path = tmp_path / "b.db"
    db = sqlite3.connect(path, isolation_level=None)
    names = [m.name for m in migrations.MIGRATIONS]
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index("0022_world_view")])
    sqlite_migrate.migrate(db)
    monkeypatch.undo()
    pages = [("notes/fenced", "world", "# Fenced\nopen words\n<!-- facts -->\n- [private] hidden words\n<!-- /facts -->\n"),
             ("notes/secret", "private", "# Secret\nsecret words\n"),
             ("notes/meant", "world", "\n---\nvisibility: private\n---\n# Meant\nmeant words\n"),
             ("notes/bom", "world", "\ufeff---\nvisibility: private\n---\nbom words\n")]
    for slug, visibility, body in pages:
        db.execute("INSERT INTO pages (source_id, slug, slug_rev, body, markdown, visibility, created_at, updated_at) "
                   "VALUES ('s', ?, ?, ?, ?, ?, 1, 1)", (slug, slug[::-1], body, body, visibility))
    for fact, visibility in (("open fact", "world"), ("hidden fact", "private")):
        db.execute("INSERT INTO facts (source_id, fact, fact_norm, kind, visibility, provenance, valid_from, created_at, "
                   "search_terms) VALUES ('s', ?, ?, 'fact', ?, 't', 1, 1, ?)", (fact, fact, visibility, fact))
    db.close()
    brain = SqliteBrain.open(path)
    try:
        visibility = dict(brain.db.execute("SELECT slug, visibility FROM pages").fetchall())
        assert visibility == {"notes/fenced": "world", "notes/secret": "private", "notes/meant": "private", "notes/bom": "private"}
        indexed = " ".join(r[0] for r in brain.db.execute("SELECT body FROM pages_world_fts"))
        assert "open words" in indexed and "hidden" not in indexed and "secret" not in indexed and "meant" not in indexed
        assert [r[0] for r in brain.db.execute("SELECT rowid FROM facts_world_fts WHERE facts_world_fts MATCH 'fact'")] == \
            [r[0] for r in brain.db.execute("SELECT id FROM facts WHERE visibility = 'world'")]
    finally:
        brain.close()
