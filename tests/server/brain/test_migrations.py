"""Migrations: named steps with a record table, idempotent, refusing a future schema."""

import sqlite3

import pytest

from memverbs.server.brain import migrations
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
    migrations.migrate(db)
    db.execute("DELETE FROM _migrations WHERE name = '0002_keyword_index'")
    db.executescript("DROP TABLE pages_fts; DROP TABLE facts_fts; DROP TRIGGER IF EXISTS pages_fts_ai;"
                     "DROP TRIGGER IF EXISTS pages_fts_ad; DROP TRIGGER IF EXISTS pages_fts_au;"
                     "DROP TRIGGER IF EXISTS facts_fts_ai; DROP TRIGGER IF EXISTS facts_fts_ad;")
    db.close()
    brain = SqliteBrain.open(path)
    assert brain.schema_status()["pending"] == []
