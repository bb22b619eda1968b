"""`memverbs migrate --to URL`: copy a brain to another backend, losslessly, resumably, verified.

The source is opened read-only and only ever read. Tables are copied in
dependency order, each in key order in batches, every batch its own write
transaction in the target; ids are kept, so links between rows survive as they
are. An interrupted copy resumes after the last key the target holds. A fact's
`superseded_by` can point at a later fact, so it is filled in a second pass once
every fact is there. The verify step compares, per table, the row count and a
SHA-256 over every row in key order: equal on both sides or the copy is not done.

Both backends have the same tables column for column (schema.py, written once for
both); a column or table this code does not list is refused, not dropped silently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memverbs.server.errors import BrainError

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.brain.postgres import PostgresBrain
    from memverbs.server.brain.sqlite import SqliteBrain

BATCH = 1000

# (table, key columns, every column) in an order that satisfies the foreign keys.
TABLES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("people", ("id",), ("id", "name", "role", "created_at")),
    ("pages", ("id",), ("id", "source_id", "slug", "slug_rev", "title", "type", "body", "frontmatter", "summary",
                        "visibility", "origin", "created_at", "updated_at", "last_retrieved_at", "deleted_at",
                        "markdown", "title_key", "owner")),
    ("page_versions", ("id",), ("id", "page_id", "version", "markdown", "title", "visibility", "written_at", "replaced_at",
                                "replaced_by", "owner", "by_person")),
    ("aliases", ("id",), ("id", "source_id", "slug", "alias", "alias_norm", "origin")),
    ("links", ("id",), ("id", "source_id", "from_slug", "to_slug", "link_type", "link_source", "context", "created_at",
                         "private_row", "owner")),
    ("timeline", ("id",), ("id", "source_id", "slug", "date", "summary", "detail", "origin", "created_at",
                            "private_row", "owner")),
    ("facts", ("id",), ("id", "source_id", "fact", "fact_norm", "kind", "entity_slug", "visibility", "notability",
                        "provenance", "source_session", "context", "confidence", "valid_from", "valid_until",
                        "expired_at", "expiry_reason", "superseded_by", "consolidated_at", "consolidated_into",
                        "created_at", "project", "search_terms", "owner")),
    ("fact_moves", ("id",), ("id", "fact_id", "from_slug", "to_slug", "reason", "moved_at", "by_person")),
    ("fact_audit", ("id",), ("id", "fact_id", "action", "old_value", "old_at", "new_value", "reason", "actor", "at",
                             "by_person")),
    ("projects", ("source_id", "key"), ("source_id", "key", "slug", "name", "root", "created_at", "updated_at")),
    ("session_cursors", ("source_id", "client_id", "session_id"),
     ("source_id", "client_id", "session_id", "last_wake_at", "cursor_slug", "created_at", "updated_at")),
    ("access_tokens", ("id",), ("id", "name", "token_hash", "token_hint", "scopes", "surface", "source_id", "client_id",
                                "created_at", "last_used_at", "revoked_at", "person")),
    ("oauth_clients", ("id",), ("id", "client_id", "name", "metadata", "secret_hash", "lane", "created_at", "last_used_at",
                                "revoked_at")),
    ("oauth_tokens", ("id",), ("id", "client_ref", "kind", "token_hash", "family", "scopes", "surface", "source_id",
                               "resource", "redirect_uri", "code_challenge", "state", "attempts", "expires_at",
                               "created_at", "revoked_at")),
    ("oauth_owner_secrets", ("id",), ("id", "kind", "secret_hash", "expires_at", "created_at", "used_at")),
    ("vector_spaces", ("id",), ("id", "provider", "model", "dims", "created_at")),
    ("chunks", ("id",), ("id", "source_id", "page_id", "ord", "text", "text_hash")),
    ("text_vectors", ("id",), ("id", "space_id", "text_hash", "vector", "created_at")),
    ("fact_vectors", ("fact_id", "space_id"), ("fact_id", "space_id", "vector", "created_at")),
    ("sync_folders", ("id",), ("id", "source_id", "root", "slug_prefix", "mode", "created_at", "last_pass_at",
                               "last_change_at", "watcher_pid", "watcher_beat", "host", "watcher_host", "folder_uid",
                               "owner", "unavailable_at", "unavailable_reason")),
    ("sync_files", ("folder_id", "rel_path"), ("folder_id", "rel_path", "slug", "file_hash", "size", "mtime_ns",
                                               "page_updated_at", "synced_at")),
    ("sync_conflicts", ("id",), ("id", "folder_id", "rel_path", "slug", "brain_content", "detected_at", "resolved_at",
                                 "cause")),
    ("sync_failures", ("folder_id", "rel_path"), ("folder_id", "rel_path", "size", "mtime_ns", "outcome", "reason", "first_at",
                                                 "last_at")),
)
# Maintained by the backend itself, never copied: SQLite's FTS5 tables, Postgres's tsvector and pgvector columns.
DERIVED_COLUMNS = {"search", "search_len", "embedding"}
DEFERRED = {("facts", "superseded_by")}
TEXT_KEYS = {"source_id", "client_id", "session_id", "rel_path", "key"}

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

    def count(self, table: str) -> int:
        return int(self.brain.aggregate(f"SELECT count(*) FROM {table}")[0])

    def _keys(self, key: tuple[str, ...], suffix: str = "") -> str:
        # Text keys compare byte-wise on both sides (SQLite's order), so both read rows in one order.
        return ", ".join((f'{k} COLLATE "C"' if self.pg and k in TEXT_KEYS else k) + suffix for k in key)

    def rows(self, table: str, key: tuple[str, ...], cols: tuple[str, ...], after: tuple | None, limit: int) -> list:
        keys = self._keys(key)
        where = ""
        args: tuple = ()
        if after is not None:
            where = f"WHERE ({keys}) > ({', '.join([self.mark] * len(key))})"
            args = tuple(after)
        return self.brain.query(
            f"SELECT {', '.join(cols)} FROM {table} {where} ORDER BY {keys} LIMIT {int(limit)}", args
        )

    def last_key(self, table: str, key: tuple[str, ...]) -> tuple | None:
        row = self.brain.one(f"SELECT {', '.join(key)} FROM {table} ORDER BY {self._keys(key, ' DESC')} LIMIT 1")
        return tuple(row) if row is not None else None

    def insert(self, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join([self.mark] * len(cols))})"
        self._executemany(sql, rows)

    def set_superseded(self, pairs: list[tuple[int, int]]) -> None:
        m = self.mark
        self._executemany(f"UPDATE facts SET superseded_by = {m} WHERE id = {m}", pairs)

    def _executemany(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        """One statement over many rows, in one write transaction (a cursor's executemany on either driver)."""
        with self.brain.write() as db:
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
        with brain.write() as db:
            for table, key, _ in TABLES:
                if key == ("id",):
                    db.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(max(id), 1), max(id) IS NOT NULL) "
                        f"FROM {table}"
                    )
        with brain.connection() as conn:
            if brain.pgvector:
                backfill_embeddings(conn)
            conn.execute("ANALYZE")  # planner statistics for the bulk-loaded tables, before the first query


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


def table_batches(side: _Side, table: str, key: tuple[str, ...], cols: tuple[str, ...]) -> Iterator[list]:
    """Every row of `table` in key order, a batch at a time."""
    after = None
    while rows := side.rows(table, key, cols, after, BATCH):
        yield rows
        after = tuple(rows[-1][cols.index(k)] for k in key)


def digest_rows(digest: hashlib._Hash, rows: Sequence[Sequence[object]]) -> None:
    """Feed rows to a table's digest: the one row encoding every comparison of two brains uses."""
    for r in rows:
        digest.update("\x1f".join(_value(v) for v in r).encode() + b"\x1e")


def table_hash(side: _Side, table: str, key: tuple[str, ...], cols: tuple[str, ...]) -> tuple[int, str]:
    """(rows, SHA-256 over every row in key order), read in batches."""
    digest = hashlib.sha256()
    n = 0
    for rows in table_batches(side, table, key, cols):
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
    known = {name for name, _, _ in TABLES}
    for side, label in ((source, "source"), (target, "target")):
        extra = side.tables() - known
        if extra:
            raise BrainError(
                f"the {label} brain has tables this memverbs cannot copy ({', '.join(sorted(extra))})",
                "Upgrade memverbs; nothing was copied.",
            )
        for name, _, cols in TABLES:
            unknown = set(side.columns(name)) - set(cols) - DERIVED_COLUMNS
            if unknown:
                raise BrainError(
                    f"the {label} brain's {name} table has columns this memverbs cannot copy ({', '.join(sorted(unknown))})",
                    "Upgrade memverbs; nothing was copied.",
                )


def transfer(source_brain: Brain, target_brain: Brain, *, resume: bool = False, progress: Progress | None = None) -> TransferReport:
    """Copy every row of `source_brain` into `target_brain` (new, or partly copied with `resume`), then verify."""
    source, target = _Side(source_brain), _Side(target_brain)
    tell = progress or (lambda stage, done, total: None)
    check_compatible(source, target)
    held = sum(target.count(name) for name, _, _ in TABLES)
    if held and not resume:
        raise BrainError(
            f"the target brain is not empty ({held} rows)",
            "Copy into a new, empty brain; or pass --resume to continue a copy that was interrupted.",
        )
    report = TransferReport()
    for name, key, cols in TABLES:
        total = source.count(name)
        after = target.last_key(name, key) if resume else None
        done = target.count(name)
        copied = 0
        tell(f"copying {name}", done, total)
        deferred = [i for i, c in enumerate(cols) if (name, c) in DEFERRED]
        while rows := source.rows(name, key, cols, after, BATCH):
            values = [tuple(None if i in deferred else r[i] for i in range(len(cols))) for r in rows]
            target.insert(name, cols, values)
            after = tuple(rows[-1][cols.index(k)] for k in key)
            copied += len(rows)
            tell(f"copying {name}", min(done + copied, total), total)
        report.copied[name] = copied
    # Second pass: supersession links, now that every fact they name exists (idempotent on resume).
    after = None
    while rows := source.brain.query(
        f"SELECT id, superseded_by FROM facts WHERE superseded_by IS NOT NULL AND id > {source.mark} ORDER BY id LIMIT {BATCH}",
        (after if after is not None else 0,),
    ):
        target.set_superseded([(r[1], r[0]) for r in rows])
        after = rows[-1][0]
    target.finish()
    for name, key, cols in TABLES:
        tell("verifying", len(report.tables), len(TABLES))
        s_rows, s_hash = table_hash(source, name, key, cols)
        t_rows, t_hash = table_hash(target, name, key, cols)
        report.tables.append(TableReport(name, s_rows, t_rows, s_hash, t_hash))
    tell("verifying", len(TABLES), len(TABLES))
    return report
