"""`memverbs migrate --to URL`: copy a brain to another backend, losslessly, resumably, verified.

The source is opened read-only and only ever read. Tables are copied in
dependency order, each in key order in batches, every batch its own write
transaction in the target; ids are kept, so links between rows survive as they
are. An interrupted copy resumes after the last key the target holds. A fact's
`superseded_by` can point at a later fact, so it is filled in a second pass once
every fact is there. The verify step compares, per table, the row count and a
SHA-256 over every row in key order: equal on both sides or the copy is not done.

Both backends have the same tables column for column (schema.py, written once for
both); the tables, their columns, keys and foreign keys are read from that declaration
(tables.py), and a column or table it does not declare is refused, not dropped silently.

Every person's rows are copied: the source is read as one snapshot of the whole brain and the
target written as a whole, both as the brain's owner (`whole_brain()`: on Postgres the role that
owns the tables; any other login is refused with the role it needs), so a teammate's private
rows are neither left behind nor refused by the target's row policies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memverbs.server.brain import stores
from memverbs.server.brain.names_store import rebuild_all
from memverbs.server.brain.tables import DERIVED_COLUMNS, Table
from memverbs.server.errors import BrainError

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.brain.postgres import PostgresBrain
    from memverbs.server.brain.sqlite import SqliteBrain

BATCH = 1000

Progress = Callable[[str, int, int], None]


@dataclass
class TableReport:
    table: str
    source_rows: int
    target_rows: int
    source_hash: str
    target_hash: str

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and self.source_hash == self.target_hash


@dataclass
class TransferReport:
    copied: dict[str, int] = field(default_factory=dict)
    tables: list[TableReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables)

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "copied": self.copied,
            "verify": [dict(t.__dict__, ok=t.ok) for t in self.tables],
        }


class _Side:
    """The few raw operations a copy needs, in each backend's dialect."""

    def __init__(self, brain: Brain) -> None:
        self.brain = _backend(brain)
        self.pg = brain.backend == "postgres"
        self.mark = "%s" if self.pg else "?"

    def columns(self, table: str) -> list[str]:
        if self.pg:
            rows = self.brain.query(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = %s",
                (table,),
            )
        else:
            rows = self.brain.query(f"SELECT name FROM pragma_table_info('{table}')")
        return [r[0] for r in rows]

    def tables(self) -> set[str]:
        if self.pg:
            # fact_totals is kept by a trigger on facts: the target's fills itself as the facts are copied.
            rows = self.brain.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'fact_totals'"
            )
        else:
            rows = self.brain.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE '%_fts%' AND name NOT LIKE 'pages_trigram%'"  # FTS5 indexes: rebuilt by the target
            )
        return {r[0] for r in rows} - {"_migrations"}

    @contextmanager
    def whole(self) -> Iterator[None]:
        """Reads of every person's rows at one moment: a snapshot, as the brain's owner."""
        with self.brain.snapshot(), self.brain.whole_brain():
            yield

    def count(self, table: Table) -> int:
        return int(self.brain.aggregate(f"SELECT count(*) FROM {table.name}")[0])

    def _keys(self, table: Table, suffix: str = "") -> str:
        # Text keys compare byte-wise on both sides (SQLite's order), so both read rows in one order.
        return ", ".join((f'{k} COLLATE "C"' if self.pg and table.column(k).kind == "text" else k) + suffix
                         for k in table.key)

    def rows(self, table: Table, after: tuple | None, limit: int) -> list:
        keys = self._keys(table)
        where = ""
        args: tuple = ()
        if after is not None:
            where = f"WHERE ({keys}) > ({', '.join([self.mark] * len(table.key))})"
            args = tuple(after)
        return self.brain.query(
            f"SELECT {', '.join(table.column_names)} FROM {table.name} {where} ORDER BY {keys} LIMIT {int(limit)}", args
        )

    def last_key(self, table: Table) -> tuple | None:
        row = self.brain.one(f"SELECT {', '.join(table.key)} FROM {table.name} ORDER BY {self._keys(table, ' DESC')} LIMIT 1")
        return tuple(row) if row is not None else None

    def insert(self, table: Table, rows: list[tuple]) -> None:
        cols = table.column_names
        sql = f"INSERT INTO {table.name} ({', '.join(cols)}) VALUES ({', '.join([self.mark] * len(cols))})"
        self._executemany(sql, rows)

    def set_later(self, table: Table, column: str, pairs: list[tuple[int, int]]) -> None:
        """Fill `column` (a link to another row of `table`, `Table.self_references`) once every row is there."""
        if pairs:
            m = self.mark
            self._executemany(f"UPDATE {table.name} SET {column} = {m} WHERE id = {m}", pairs)

    def _executemany(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        """One statement over many rows, in one write transaction (a cursor's executemany on either driver)."""
        with self.brain.write() as db, self.brain.whole_brain():
            cur = db.cursor()
            try:
                cur.executemany(sql, rows)
            finally:
                cur.close()

    def finish(self) -> None:
        """After the copy: sequences past the copied ids (Postgres), derived vector columns and indexes."""
        if not self.pg:
            return
        from memverbs.server.brain.postgres import PostgresBrain  # noqa: PLC0415 - psycopg only here
        from memverbs.server.brain.postgres_migrate import backfill_embeddings  # noqa: PLC0415

        brain = self.brain
        assert isinstance(brain, PostgresBrain)
        with brain.write() as db, brain.whole_brain():
            restart_sequences(db)
        with brain.connection() as conn:
            if brain.pgvector:
                backfill_embeddings(conn)
            conn.execute("ANALYZE")  # planner statistics for the bulk-loaded tables, before the first query


def restart_sequences(db: object) -> None:
    """Inside a Postgres write as the whole brain: each id sequence past the ids its table holds (a
    copy keeps its ids), so the next row gets a new one."""
    for table in stores.copied():
        if table.key == ("id",):
            db.execute(  # type: ignore[attr-defined]
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), COALESCE(max(id), 1), max(id) IS NOT NULL) "
                f"FROM {table.name}"
            )


def _backend(brain: Brain) -> SqliteBrain | PostgresBrain:
    """The class behind the seam: a copy speaks each backend's own SQL (psycopg imported only for Postgres)."""
    if brain.backend == "postgres":
        from memverbs.server.brain.postgres import PostgresBrain  # noqa: PLC0415

        assert isinstance(brain, PostgresBrain)
        return brain
    from memverbs.server.brain.sqlite import SqliteBrain  # noqa: PLC0415

    assert isinstance(brain, SqliteBrain)
    return brain


def _value(v: object) -> str:
    if v is None:
        return "\x00"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "b" + bytes(v).hex()
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, (int, float)):
        return "n" + repr(v)
    return "s" + str(v)


def table_batches(side: _Side, table: Table) -> Iterator[list]:
    """Every row of `table` in key order, a batch at a time."""
    after = None
    cols = table.column_names
    while rows := side.rows(table, after, BATCH):
        yield rows
        after = tuple(rows[-1][cols.index(k)] for k in table.key)


def digest_rows(digest: hashlib._Hash, rows: Sequence[Sequence[object]]) -> None:
    """Feed rows to a table's digest: the one row encoding every comparison of two brains uses."""
    for r in rows:
        digest.update("\x1f".join(_value(v) for v in r).encode() + b"\x1e")


def table_hash(side: _Side, table: Table) -> tuple[int, str]:
    """(rows, SHA-256 over every row in key order), read in batches."""
    digest = hashlib.sha256()
    n = 0
    for rows in table_batches(side, table):
        digest_rows(digest, rows)
        n += len(rows)
    return n, digest.hexdigest()


def check_compatible(source: _Side, target: _Side) -> None:
    """Both brains at the same schema, with exactly the tables and columns this code copies."""
    s, t = source.brain.schema_status(), target.brain.schema_status()
    if s["unknown"] or s["pending"] or set(s["applied"]) != set(t["applied"]):
        raise BrainError(
            f"the two brains are at different schema versions (source {s['applied']}, target {t['applied']})",
            "Run `memverbs init` on the source with this memverbs first (or upgrade memverbs).",
        )
    known = {table.name for table in stores.copied()} | stores.rebuilt()
    for side, label in ((source, "source"), (target, "target")):
        extra = side.tables() - known
        if extra:
            raise BrainError(
                f"the {label} brain has tables this memverbs cannot copy ({', '.join(sorted(extra))})",
                "Upgrade memverbs; nothing was copied.",
            )
        for table in stores.copied():
            unknown = set(side.columns(table.name)) - set(table.column_names) - DERIVED_COLUMNS
            if unknown:
                raise BrainError(
                    f"the {label} brain's {table.name} table has columns this memverbs cannot copy ({', '.join(sorted(unknown))})",
                    "Upgrade memverbs; nothing was copied.",
                )


def transfer(source_brain: Brain, target_brain: Brain, *, resume: bool = False, progress: Progress | None = None) -> TransferReport:
    """Copy every row of `source_brain` into `target_brain` (new, or partly copied with `resume`), then verify."""
    source, target = _Side(source_brain), _Side(target_brain)
    tell = progress or (lambda stage, done, total: None)
    check_compatible(source, target)
    tables = stores.copied()
    with target.whole():
        held = sum(target.count(table) for table in tables)
        resumed = {table.name: (target.count(table), target.last_key(table)) for table in tables} if resume else {}
    if held and not resume:
        raise BrainError(
            f"the target brain is not empty ({held} rows)",
            "Copy into a new, empty brain; or pass --resume to continue a copy that was interrupted.",
        )
    report = TransferReport()
    with source.whole():  # every row, as of one moment: no row points at one the copy lacks
        for table in tables:
            total = source.count(table)
            done, after = resumed.get(table.name, (0, None))
            copied = 0
            tell(f"copying {table.name}", done, total)
            cols = table.column_names
            later = [cols.index(c) for c in table.self_references]  # a row may name one copied after it
            while rows := source.rows(table, after, BATCH):
                target.insert(table, [tuple(None if i in later else v for i, v in enumerate(r)) for r in rows])
                after = tuple(rows[-1][cols.index(k)] for k in table.key)
                copied += len(rows)
                tell(f"copying {table.name}", min(done + copied, total), total)
            report.copied[table.name] = copied
        # Second pass: the rows' links to later rows (a fact's supersession), now that every row they
        # name exists (idempotent on resume).
        for table in tables:
            for column in table.self_references:
                target.set_later(table, column, _later_links(source, table, column))
        with target.brain.write() as db, target.brain.whole_brain():
            rebuild_all(db)  # the name index, from the rows copied (stores.rebuilt)
        target.finish()
        with target.whole():
            for table in tables:
                tell("verifying", len(report.tables), len(tables))
                s_rows, s_hash = table_hash(source, table)
                t_rows, t_hash = table_hash(target, table)
                report.tables.append(TableReport(table.name, s_rows, t_rows, s_hash, t_hash))
    tell("verifying", len(tables), len(tables))
    return report


def _later_links(side: _Side, table: Table, column: str) -> list[tuple[int, int]]:
    """(the linked row, the row) of every row of `table` whose `column` names another row of it."""
    rows = side.brain.query(f"SELECT id, {column} FROM {table.name} WHERE {column} IS NOT NULL ORDER BY id")
    return [(r[1], r[0]) for r in rows]
