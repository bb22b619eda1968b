"""Stores declared once (server/brain/stores.py): every table the schema steps create is declared by
one store concept, with whose its rows are, and what copies, backs up and secures it follows from
that declaration alone.

The recipe docs/architecture.md gives for a new storage concept (its store module, its declaration,
a migration step) is followed here in-process, with a concept the product does not ship."""

from __future__ import annotations

import psycopg
import pytest

from memverbs.server.brain import migrations, postgres_policies, stores, tables
from memverbs.server.brain.postgres_migrate import secure_sql, teammate_tables
from memverbs.server.brain.rows import ALIAS, RW, Kept, LeftOut, Rebuilt
from memverbs.server.brain.store import Store
from memverbs.server.errors import BrainError

_TAGS = """
    CREATE TABLE page_tags (
        source_id TEXT NOT NULL,
        slug TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (source_id, slug, tag)
    );
"""


class TagStore:
    """A store the recipe adds: built on the brain, reading and writing through its `Store` members."""

    def __init__(self, brain: Store) -> None:
        self.brain = brain

    def tag(self, source: str, slug: str, tag: str) -> None:
        with self.brain.write() as db:
            db.execute("INSERT INTO page_tags (source_id, slug, tag) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                       (source, slug, tag))

    def tags(self, source: str, slug: str) -> list[str]:
        return [r[0] for r in self.brain.query(
            "SELECT tag FROM page_tags WHERE source_id = ? AND slug = ? ORDER BY tag", (source, slug))]


@pytest.fixture
def fresh_declaration():
    """The schema read again for each change a test makes (and once more after it)."""
    tables.declared.cache_clear()
    yield
    tables.declared.cache_clear()


def _declare_tags(monkeypatch) -> None:
    monkeypatch.setattr(stores.Stores, "tags", stores.Concept(TagStore, page_tags=Kept(ALIAS)), raising=False)


def _migrate_tags(monkeypatch) -> None:
    step = migrations.Step("0027_page_tags", sqlite=(_TAGS,), postgres=(_TAGS, migrations.Secure("page_tags", teammates=True)))
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, step))


def test_every_table_the_steps_create_is_declared_by_one_concept(fresh_declaration):
    declared = stores.declared_tables()
    assert {t.name for t in tables.declared()} == set(declared)
    assert {t.name for t in stores.copied()} == set(declared) - stores.rebuilt()
    assert sum(len(c.tables) for c in stores.concepts()) == len(declared)  # each table once
    assert all(c.name and c.tables for c in stores.concepts())


def test_what_a_backup_holds_is_what_the_declaration_keeps():
    from memverbs.server.sync.backup import LEFT_OUT, backup_tables

    declared = stores.declared_tables()
    assert {t.name for t in backup_tables()} == {n for n, d in declared.items() if isinstance(d, Kept)}
    assert {n: d.why for n, d in declared.items() if isinstance(d, LeftOut)} == LEFT_OUT
    assert not {t.name for t in backup_tables()} & {n for n, d in declared.items() if isinstance(d, Rebuilt)}


def test_every_table_whose_kind_has_row_policies_is_secured_by_a_step():
    """A private kind declared and never put under row-level security would be readable by every
    teammate: each table whose kind derives policies is named by a step's `Secure`, and no other."""
    secured = [t for step in migrations.MIGRATIONS for part in step.work("postgres")
               if isinstance(part, migrations.Secure) for t in part.tables]
    assert len(secured) == len(set(secured))
    derived = {n for n, d in stores.declared_tables().items() if postgres_policies.policies_for(n, d.whose)}
    assert set(secured) == derived


def test_a_declared_table_no_step_creates_is_refused(monkeypatch, fresh_declaration):
    _declare_tags(monkeypatch)
    with pytest.raises(BrainError) as exc:
        stores.copied()
    assert "declared by a store concept but created by no schema step: page_tags" in str(exc.value)
    assert "Add a storage concept" in exc.value.fix


def test_a_table_a_step_creates_and_no_concept_declares_is_refused(monkeypatch, fresh_declaration):
    _migrate_tags(monkeypatch)
    with pytest.raises(BrainError) as exc:
        stores.copied()
    assert "created by a schema step but declared by no store concept: page_tags" in str(exc.value)


def test_a_table_declared_twice_is_refused(monkeypatch):
    monkeypatch.setattr(stores.Stores, "more_pages", stores.Concept(TagStore, pages=Kept(ALIAS)), raising=False)
    with pytest.raises(BrainError, match="pages is declared twice"):
        stores.declared_tables()


def test_a_concept_added_as_the_recipe_says_is_migrated_copied_backed_up_and_secured(
    monkeypatch, fresh_declaration, tmp_path
):
    """The recipe's three parts (the store above, its declaration, its step) and nothing else: the
    new table is created, copied by `migrate`, held and cut by a person's backup, given row policies
    and granted to teammates on Postgres, and its store is reached from a brain."""
    from memverbs.server.brain.sqlite import SqliteBrain
    from memverbs.server.sync.backup import backup_tables

    _declare_tags(monkeypatch)
    _migrate_tags(monkeypatch)
    assert "page_tags" in {t.name for t in stores.copied()}
    assert "page_tags" in {t.name for t in backup_tables()}
    assert "page_tags" in teammate_tables()[0]
    secure = secure_sql(migrations.Secure("page_tags", teammates=True))
    assert "CREATE POLICY people_read ON page_tags" in secure and "GRANT SELECT, INSERT, UPDATE, DELETE ON page_tags" in secure

    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    try:
        tags = stores.Stores.tags.of(brain)
        tags.tag("default", "people/alice", "met")
        assert tags.tags("default", "people/alice") == ["met"]
        assert stores.Stores.pages.of(brain) is brain  # a concept still among the brain's bases
    finally:
        brain.close()


def test_a_postgres_brain_secures_every_table_as_its_kind_says(brain_backend, brain_url, pg):
    """Live, on a migrated Postgres brain: each table whose kind derives policies has row-level
    security forced and the four policies, and a teammate's grants follow the kinds."""
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation

    open_brain(BrainLocation("postgres", url=brain_url), create=True).close()
    declared = stores.declared_tables()
    with psycopg.connect(brain_url) as conn:
        forced = {r[0] for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' "
            "AND relrowsecurity AND relforcerowsecurity")}
        policies: dict[str, set[str]] = {}
        for table, name in conn.execute("SELECT tablename, policyname FROM pg_policies"):
            policies.setdefault(table, set()).add(name)
    for table, d in declared.items():
        if postgres_policies.policies_for(table, d.whose):
            assert table in forced, table
            assert {"people_read", "people_add", "people_change", "people_remove"} <= policies[table], table
    rw, read = teammate_tables()
    assert set(rw) == {n for n, d in declared.items() if d.whose.grant == RW}
    assert "people" in read and not {"oauth_clients", "oauth_tokens", "oauth_owner_secrets"} & {*rw, *read}
