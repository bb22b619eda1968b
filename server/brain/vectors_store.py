"""Chunks and vectors, on either backend: float32 little-endian BLOBs tagged with their space.

A space is the identity of a vector: (provider, model, dims). Vectors of one space are only ever
compared with each other; a model change leaves the old ones in place (stale, ignored) until
`memverbs reindex --prune` removes them. Vectors are stored the same way on both backends, so a
brain copies between them unchanged.

This store holds what both backends share: spaces, chunks, page and fact vectors, the dedup
bucket, and what `memverbs reindex` reads and writes. How a backend answers the vector arm is its
own logic and lives beside it, sharing nothing: SQLite's in-process index over a memory-mapped
snapshot (`sqlite_vector_index.py`), and on Postgres pgvector's HNSW index in the database or,
without the extension, the in-process exact scan (`postgres_vector_index.py`). numpy is imported
only by the code that decodes vectors, which runs only when an embedding provider is configured.
"""

from __future__ import annotations

from memverbs.server.brain.store import Store, first

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row
    from memverbs.server.brain.store import Tx

_LIVE_PAGE = "p.deleted_at IS NULL AND (? OR p.visibility = 'world')"
_ACTIVE = "f.expired_at IS NULL AND (f.valid_until IS NULL OR f.valid_until > ?)"
_SPACE = "SELECT id FROM vector_spaces WHERE provider = ? AND model = ? AND dims = ?"
_NO_SPACE = -1  # matches no space (ids are positive): "every vector is missing", "keep no space"


class VectorStore(Store):
    # -- spaces ------------------------------------------------------------------

    def space_id(self, provider: str, model: str, dims: int, *, create: bool = False) -> int | None:
        row = self.one(_SPACE, (provider, model, dims))
        if row is not None or not create:
            return row[0] if row is not None else None
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        with self.write() as db:
            db.execute(
                "INSERT INTO vector_spaces (provider, model, dims, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (provider, model, dims, now_ms()),
            )
            space = int(first(db.execute(_SPACE, (provider, model, dims)))[0])
            self._space_created(db, space, dims)
            return space

    def _space_created(self, db: Tx, space_id: int, dims: int) -> None:
        """Inside the write that made the space: what the backend's index needs for it (pgvector: its HNSW index)."""

    def space_for(self, provider: str, model: str, dims: int | None) -> int | None:
        """The space these vectors belong to; with dims unknown, the newest one of this provider and model."""
        if dims:
            return self.space_id(provider, model, dims)
        row = self.one(
            "SELECT id FROM vector_spaces WHERE provider = ? AND model = ? ORDER BY id DESC LIMIT 1", (provider, model)
        )
        return row[0] if row is not None else None

    def spaces(self) -> list[Row]:
        return self.query(
            "SELECT s.id, s.provider, s.model, s.dims, "
            "(SELECT count(*) FROM text_vectors v WHERE v.space_id = s.id) AS chunk_vectors, "
            "(SELECT count(*) FROM fact_vectors f WHERE f.space_id = s.id) AS fact_vectors "
            "FROM vector_spaces s ORDER BY s.id"
        )

    # -- chunks --------------------------------------------------------------------

    def _write_chunks(self, db: Tx, source: str, page: int | str, title: str | None, body: str) -> None:
        """Inside the page's write transaction: the chunks always match the saved text. `page`: the page's
        id, or the slug of a page inserted in this transaction (its id is found by the statement, so a
        batched write need not read it back first)."""
        # Only a page write chunks: the hooks' reads skip the Markdown parser's imports and regexes.
        from memverbs.server.pages.chunks import chunk_page, embed_input, text_hash  # noqa: PLC0415

        chunks = [(ord_, chunk, text_hash(embed_input(title, chunk))) for ord_, chunk in enumerate(chunk_page(title, body))]
        if isinstance(page, int):
            db.execute("DELETE FROM chunks WHERE page_id = ?", (page,))
            if chunks:
                db.executemany("INSERT INTO chunks (source_id, page_id, ord, text, text_hash) VALUES (?, ?, ?, ?, ?)",
                               [(source, page, *c) for c in chunks])
        elif chunks:
            db.executemany("INSERT INTO chunks (source_id, page_id, ord, text, text_hash) "
                           "SELECT ?, id, ?, ?, ? FROM pages WHERE source_id = ? AND slug = ?",
                           [(source, *c, source, page) for c in chunks])

    def chunk_unchunked_pages(self, limit: int = 500) -> int:
        """Chunk live pages that have none (written before chunking existed, or in bulk); returns how many."""
        rows = self.query(
            "SELECT p.id, p.source_id, p.title, p.body FROM pages p WHERE p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id) LIMIT ?",
            (limit,),
        )
        if rows:
            with self.write() as db:
                for r in rows:
                    self._write_chunks(db, r["source_id"], r["id"], r["title"], r["body"])
        return len(rows)

    def unchunked_page_count(self) -> int:
        return int(self.aggregate(
            "SELECT count(*) FROM pages p WHERE p.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id)"
        )[0])

    def chunks_missing_vectors(self, space_id: int, *, after_chunk: int, limit: int) -> list[Row]:
        """Chunks of live pages with no vector in this space, by chunk id (keyset: reindex pages through them)."""
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE c.id > ? AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = ? AND v.text_hash = c.text_hash) "
            "ORDER BY c.id LIMIT ?",
            (after_chunk, space_id, limit),
        )

    def page_chunks_missing_vectors(self, source: str, slug: str, space_id: int) -> list[Row]:
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE p.source_id = ? AND p.slug = ? AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = ? AND v.text_hash = c.text_hash) "
            "ORDER BY c.ord",
            (source, slug, space_id),
        )

    def missing_vector_counts(self, space_id: int | None, now: int) -> dict:
        """What reindex has left to do in a space (all sources): chunks and active facts without vectors."""
        sid = space_id if space_id is not None else _NO_SPACE
        chunks = self.aggregate(
            "SELECT count(*) FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = ? AND v.text_hash = c.text_hash)",
            (sid,),
        )[0]
        facts = self.aggregate(
            f"SELECT count(*) FROM facts f WHERE {_ACTIVE} "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.space_id = ? AND v.fact_id = f.id)",
            (now, sid),
        )[0]
        return {"chunks": chunks, "facts": facts, "unchunked_pages": self.unchunked_page_count()}

    # -- page vectors ----------------------------------------------------------------

    def store_text_vectors(self, space_id: int, items: list[tuple[str, bytes]], now: int) -> None:
        if not items:
            return
        with self.write() as db:
            self._insert_text_vectors(db, space_id, items, now)

    def _insert_text_vectors(self, db: Tx, space_id: int, items: list[tuple[str, bytes]], now: int) -> None:
        """The rows as stored; a backend whose index keeps a column of its own (pgvector) writes that too."""
        db.executemany(
            "INSERT INTO text_vectors (space_id, text_hash, vector, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(space_id, h, blob, now) for h, blob in items],
        )

    def max_text_vector_id(self) -> int:
        return int(self.aggregate("SELECT COALESCE(max(id), 0) FROM text_vectors")[0])

    def text_vector_blob(self, vector_id: int) -> bytes | None:
        row = self.one("SELECT vector FROM text_vectors WHERE id = ?", (vector_id,))
        return bytes(row[0]) if row is not None else None

    def chunk_hits(self, source: str, vector_ids: list[int], *, allow_private: bool) -> list[Row]:
        """The live, visible chunks behind these vectors (one vector can serve several pages)."""
        return self._among(
            "SELECT v.id AS vector_id, c.text AS chunk, p.slug, p.title, p.body, p.owner FROM text_vectors v "
            "JOIN chunks c ON c.text_hash = v.text_hash AND c.source_id = ? JOIN pages p ON p.id = c.page_id "
            f"WHERE {_LIVE_PAGE} AND", (source, allow_private), "v.id", vector_ids,
        )

    def page_vector_ids(self, source: str, slugs: list[str], space_id: int) -> list[Row]:
        """(slug, vector_id, chunk) for every embedded chunk of these pages."""
        return self._among(
            "SELECT p.slug, v.id AS vector_id, c.text AS chunk FROM pages p JOIN chunks c ON c.page_id = p.id "
            "JOIN text_vectors v ON v.text_hash = c.text_hash AND v.space_id = ? "
            "WHERE p.source_id = ? AND p.deleted_at IS NULL AND", (space_id, source), "p.slug", slugs,
        )

    def _among(self, sql: str, params: tuple, column: str, values: list) -> list[Row]:
        """The rows of `sql` (which ends in `WHERE … AND`) whose `column` is one of `values`."""
        if not values:
            return []
        among, listed = self.dialect.any_of(column, values)
        return self.query(f"{sql} {among}", (*params, *listed))

    # -- fact vectors ------------------------------------------------------------------------

    def facts_missing_vectors(self, space_id: int, now: int, *, after_fact: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT f.id, f.fact FROM facts f WHERE f.id > ? AND {_ACTIVE} "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.space_id = ? AND v.fact_id = f.id) "
            "ORDER BY f.id LIMIT ?",
            (after_fact, now, space_id, limit),
        )

    def fact_vectors_after(self, space_id: int, after_fact: int) -> list[Row]:
        """Every fact vector of the space above a fact id, in id order: (fact_id, vector)."""
        return self.query(
            "SELECT fact_id, vector FROM fact_vectors WHERE space_id = ? AND fact_id > ? ORDER BY fact_id", (space_id, after_fact)
        )

    def fact_vector_count(self, space_id: int) -> int:
        return int(self.aggregate("SELECT count(*) FROM fact_vectors WHERE space_id = ?", (space_id,))[0])

    def store_fact_vectors(self, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        with self.write() as db:
            self._store_fact_vectors(db, space_id, items, now)

    def _store_fact_vectors(self, db: Tx, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        if not items:
            return
        db.executemany(
            "INSERT INTO fact_vectors (fact_id, space_id, vector, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (fact_id, space_id) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at",
            [(fid, space_id, blob, now) for fid, blob in items],
        )

    def _bucket_vectors(self, db: Tx, source: str, entity_slug: str, visibility: str, space_id: int, now: int) -> list[Row]:
        """Active facts about one entity, of one visibility, with a vector in this space: the dedup candidates."""
        return db.execute(
            "SELECT f.id, f.kind, f.fact_norm, f.valid_until, v.vector FROM facts f "
            "JOIN fact_vectors v ON v.fact_id = f.id AND v.space_id = ? "
            f"WHERE f.source_id = ? AND f.entity_slug = ? AND f.visibility = ? AND {_ACTIVE}",
            (space_id, source, entity_slug, visibility, now),
        ).fetchall()

    # -- housekeeping -------------------------------------------------------------------

    def prune_vectors(self, keep_space_id: int | None) -> dict:
        """Drop vectors no live chunk uses, and every vector of another space; returns the counts."""
        keep = keep_space_id if keep_space_id is not None else _NO_SPACE
        with self.write() as db:
            orphans = db.execute(
                "DELETE FROM text_vectors WHERE NOT EXISTS (SELECT 1 FROM chunks c JOIN pages p ON p.id = c.page_id "
                "WHERE c.text_hash = text_vectors.text_hash AND p.deleted_at IS NULL)"
            ).rowcount
            other = db.execute("DELETE FROM text_vectors WHERE space_id <> ?", (keep,)).rowcount
            other += db.execute("DELETE FROM fact_vectors WHERE space_id <> ?", (keep,)).rowcount
        return {"orphan_vectors": orphans, "other_model_vectors": other}
