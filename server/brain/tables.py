"""The brain's tables and columns, read from the one schema declaration: the schema steps themselves.

`schema.py` and the dialect modules declare every table once, as the SQL of the schema steps
(`migrations.MIGRATIONS`). What copies rows — `migrate` (transfer.py), `export --full` and
`import` (server/sync/backup*.py) — needs the same declaration as data: each table's columns in
order, their kind of value, which may be NULL, the key rows are ordered by, and which tables a
column refers to. Rather than restate it, it is read here from an in-memory SQLite database the
steps were applied to, once per process: a column a step adds is copied, checked and restored by
the next run with no other change.

What the database keeps for itself is not declared here: SQLite's FTS5 tables (the triggers fill
them) and `_migrations`; Postgres's generated `tsvector` columns and pgvector's `embedding`
(`DERIVED_COLUMNS`), and `fact_totals` (its trigger's); nor the name index (`DERIVED_TABLES`),
written again from the copied rows.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import NamedTuple

# Postgres-only columns its triggers and generated expressions keep: never copied, never restored.
DERIVED_COLUMNS = frozenset({"search", "search_len", "embedding"})
# Tables the brain derives from its other rows, written again after a copy or a restore instead of
# copied (a copy of them would collide with the rows the copied facts' triggers already wrote): the
# name index, from the pages, their aliases and the facts (names_store.rebuild_all).
DERIVED_TABLES = frozenset({"entity_names"})

# SQLite's declared type → the kind of value a row holds there (a flag is an INTEGER too).
_KINDS = {"INTEGER": "int", "REAL": "float", "TEXT": "text", "BLOB": "bytes"}


class Column(NamedTuple):
    name: str
    kind: str  # int | float | text | bytes
    not_null: bool
    references: str | None  # the table a foreign key names, if any (its key is `id`)


class Table(NamedTuple):
    name: str
    key: tuple[str, ...]  # the primary key: rows are read, hashed and written in its order
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def self_references(self) -> tuple[str, ...]:
        """Columns naming another row of this table (facts.superseded_by): filled in after every row is there."""
        return tuple(c.name for c in self.columns if c.references == self.name)


@functools.cache
def declared() -> tuple[Table, ...]:
    """Every table the schema steps create, in an order that satisfies their foreign keys."""
    from memverbs.server.brain import sqlite_migrate  # noqa: PLC0415 - the steps, only when rows are copied

    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        sqlite_migrate.migrate(db, "the schema declaration")
        rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid").fetchall()
        virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
        names = [name for name, _ in rows
                 if not name.startswith(("sqlite_", "_migrations")) and not any(name.startswith(v) for v in virtual)
                 and name not in DERIVED_TABLES]
        tables = {name: _table(db, name) for name in names}
    finally:
        db.close()
    return _in_key_order(tables, names)


def _table(db: sqlite3.Connection, name: str) -> Table:
    info = db.execute("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", (name,)).fetchall()
    refs = {r[0]: r[1] for r in db.execute('SELECT "from", "table" FROM pragma_foreign_key_list(?)', (name,))}
    key = tuple(r[0] for r in sorted((r for r in info if r[3]), key=lambda r: r[3]))
    columns = tuple(Column(r[0], _KINDS[r[1].upper()], bool(r[2]) or bool(r[3]), refs.get(r[0])) for r in info)
    return Table(name, key, columns)


def _in_key_order(tables: dict[str, Table], created: list[str]) -> tuple[Table, ...]:
    """The tables in creation order, each moved after the tables its foreign keys name."""
    out: list[Table] = []
    placed: set[str] = set()

    def place(name: str) -> None:
        if name in placed:
            return
        placed.add(name)
        for c in tables[name].columns:
            if c.references and c.references != name:
                place(c.references)
        out.append(tables[name])

    for name in created:
        place(name)
    return tuple(out)


def table(name: str) -> Table:
    """The declared table called `name`; KeyError for a name the schema does not declare."""
    for t in declared():
        if t.name == name:
            return t
    raise KeyError(name)
