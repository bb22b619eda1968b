"""Migrations: named steps with a record table, idempotent, refusing a future schema."""

import sqlite3

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
    if brain_url:
        import psycopg

        with psycopg.connect(brain_url, autocommit=True) as conn:
            for sql in undo:
                conn.execute(sql)
    else:
        db = sqlite3.connect(where.path)
        db.executescript(";\n".join(undo))
        db.close()
    brain = open_brain(where)  # applies the pending step
    try:
        assert [r["slug"] for r in brain.pages_titled("default", "été 2024", allow_private=False)] == ["notes/p0"]
        assert [r["slug"] for r in brain.pages_titled("default", "東京メモ", allow_private=False)] == ["notes/p1"]
        assert [r["slug"] for r in brain.pages_titled("default", "kubernetes", allow_private=False)] == ["notes/p2"]
    finally:
        brain.close()


def _draft(slug: str, title: str):
    from memverbs.server.brain.base import PageDraft

    return PageDraft(slug=slug, title=title, type=None, body="", frontmatter={}, summary=None, visibility="world",
                     aliases=[], links=[], timeline=[], markdown="")
