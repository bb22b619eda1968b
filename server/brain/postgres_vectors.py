"""Chunks and vectors in the Postgres brain, and its vector index.

Vectors are stored as SQLite stores them (float32 little-endian BYTEA, tagged
with their space), so a brain copies between backends unchanged. The vector
arm is answered in one of two ways, and `vector_index_kind` (doctor) says which:

* **pgvector** (the `vector` extension is installed): every page vector is also
  an `embedding vector` value, and each space has an HNSW index over it
  (cosine distance), created with the space. A query asks the server for its
  nearest vectors; cosines are real cosines (1 − cosine distance).
* **exact scan** (no pgvector on the server): the SQLite backend's in-memory
  index (`vector_index.VectorIndex`), without a snapshot file: the space's
  vectors are read once per process and then only the ones above the last id
  seen (writers commit in id order: see postgres.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.brain.vector_index import VectorIndex

from memverbs.server.brain.postgres_base import Conn, PostgresBase, first
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.pages.chunks import chunk_page, embed_input, text_hash

_LIVE_PAGE = "p.deleted_at IS NULL AND (%s OR p.visibility = 'world')"
_ACTIVE = "f.expired_at IS NULL AND (f.valid_until IS NULL OR f.valid_until > %s)"
HNSW_EF_SEARCH_MAX = 1000  # pgvector's ceiling for hnsw.ef_search

_EXACT: dict = {}
_EXACT_LOCK = threading.Lock()


def vector_literal(blob: bytes) -> str:
    """A stored vector as pgvector's text input ('[0.1,0.2,…]'); float32 values print exactly."""
    import numpy as np  # noqa: PLC0415

    return "[" + ",".join(repr(float(x)) for x in np.frombuffer(blob, dtype="<f4")) + "]"


def hnsw_index_sql(space_id: int, dims: int) -> str:
    """One partial index per space: HNSW needs a fixed dimension, and a space fixes it."""
    return (
        f"CREATE INDEX IF NOT EXISTS text_vectors_hnsw_{int(space_id)} ON text_vectors "
        f"USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops) WHERE space_id = {int(space_id)}"
    )


class PgVectorIndex:
    """One space's page vectors, searched by the server's HNSW index: the VectorIndex protocol over SQL."""

    def __init__(self, brain: PostgresBase, space_id: int, dims: int) -> None:
        self.brain = brain
        self.space_id = int(space_id)
        self.dims = int(dims)
        self._cast = f"vector({self.dims})"

    def __len__(self) -> int:
        return int(self.brain.aggregate("SELECT count(*) FROM text_vectors WHERE space_id = %s", (self.space_id,))[0])

    def search(self, query: np.ndarray) -> PgScores:
        from memverbs.server.brain.base import pack  # noqa: PLC0415

        return PgScores(self, vector_literal(pack(query)))


class PgScores:
    """One query against the server's HNSW index; the query travels in pgvector's text form."""

    def __init__(self, index: PgVectorIndex, literal: str) -> None:
        self.index, self.literal = index, literal

    def top(self, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        ix, cast = self.index, self.index._cast
        # hnsw.ef_search bounds how many neighbours a scan can return: raise it to k for this query.
        with ix.brain.connection() as conn, conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {min(max(int(k), 40), HNSW_EF_SEARCH_MAX)}")
            rows = conn.execute(
                f"SELECT id, 1 - (embedding::{cast} <=> %s::{cast}) AS cosine FROM text_vectors "
                f"WHERE space_id = %s ORDER BY embedding::{cast} <=> %s::{cast} LIMIT %s",
                (self.literal, ix.space_id, self.literal, int(k)),
            ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def of(self, vector_ids: list[int]) -> dict[int, float]:
        if not vector_ids:
            return {}
        ix, cast = self.index, self.index._cast
        rows = ix.brain.query(
            f"SELECT id, 1 - (embedding::{cast} <=> %s::{cast}) FROM text_vectors WHERE id = ANY(%s) AND space_id = %s",
            (self.literal, list(vector_ids), ix.space_id),
        )
        return {int(r[0]): float(r[1]) for r in rows}


class VectorStore(PostgresBase):
    # -- spaces ------------------------------------------------------------------

    def space_id(self, provider: str, model: str, dims: int, *, create: bool = False) -> int | None:
        row = self.one(
            "SELECT id FROM vector_spaces WHERE provider = %s AND model = %s AND dims = %s", (provider, model, dims)
        )
        if row is not None or not create:
            return row[0] if row is not None else None
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        with self.write() as db:
            db.execute(
                "INSERT INTO vector_spaces (provider, model, dims, created_at) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (provider, model, dims, now_ms()),
            )
            space = first(db.execute(
                "SELECT id FROM vector_spaces WHERE provider = %s AND model = %s AND dims = %s", (provider, model, dims)
            ))[0]
            if self.pgvector:
                db.execute(hnsw_index_sql(space, dims))
            return space

    def space_for(self, provider: str, model: str, dims: int | None) -> int | None:
        if dims:
            return self.space_id(provider, model, dims)
        row = self.one(
            "SELECT id FROM vector_spaces WHERE provider = %s AND model = %s ORDER BY id DESC LIMIT 1", (provider, model)
        )
        return row[0] if row is not None else None

    def spaces(self) -> list:
        return self.query(
            "SELECT s.id, s.provider, s.model, s.dims, "
            "(SELECT count(*) FROM text_vectors v WHERE v.space_id = s.id) AS chunk_vectors, "
            "(SELECT count(*) FROM fact_vectors f WHERE f.space_id = s.id) AS fact_vectors "
            "FROM vector_spaces s ORDER BY s.id"
        )

    # -- chunks --------------------------------------------------------------------

    def _write_chunks(self, db: Conn, source: str, page_id: int, title: str | None, body: str) -> None:
        """Inside the page's write transaction: the chunks always match the saved text."""
        db.execute("DELETE FROM chunks WHERE page_id = %s", (page_id,))
        rows = [
            (source, page_id, ord_, chunk, text_hash(embed_input(title, chunk)))
            for ord_, chunk in enumerate(chunk_page(title, body))
        ]
        if rows:
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO chunks (source_id, page_id, ord, text, text_hash) VALUES (%s, %s, %s, %s, %s)", rows
                )

    def chunk_unchunked_pages(self, limit: int = 500) -> int:
        rows = self.query(
            "SELECT p.id, p.source_id, p.title, p.body FROM pages p WHERE p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id) LIMIT %s",
            (limit,),
        )
        if rows:
            with self.write() as db:
                for r in rows:
                    self._write_chunks(db, r["source_id"], r["id"], r["title"], r["body"])
        return len(rows)

    def unchunked_page_count(self) -> int:
        return self.aggregate(
            "SELECT count(*) FROM pages p WHERE p.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id)"
        )[0]

    def chunks_missing_vectors(self, space_id: int, *, after_chunk: int, limit: int) -> list:
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE c.id > %s AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = %s AND v.text_hash = c.text_hash) "
            "ORDER BY c.id LIMIT %s",
            (after_chunk, space_id, limit),
        )

    def page_chunks_missing_vectors(self, source: str, slug: str, space_id: int) -> list:
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE p.source_id = %s AND p.slug = %s AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = %s AND v.text_hash = c.text_hash) "
            "ORDER BY c.ord",
            (source, slug, space_id),
        )

    def missing_vector_counts(self, space_id: int | None, now: int) -> dict:
        sid = space_id if space_id is not None else -1
        chunks = self.aggregate(
            "SELECT count(*) FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = %s AND v.text_hash = c.text_hash)",
            (sid,),
        )[0]
        facts = self.aggregate(
            f"SELECT count(*) FROM facts f WHERE {_ACTIVE} "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.space_id = %s AND v.fact_id = f.id)",
            (now, sid),
        )[0]
        return {"chunks": chunks, "facts": facts, "unchunked_pages": self.unchunked_page_count()}

    def store_text_vectors(self, space_id: int, items: list[tuple[str, bytes]], now: int) -> None:
        if not items:
            return
        with self.write() as db, db.cursor() as cur:
            if self.pgvector:
                cur.executemany(
                    "INSERT INTO text_vectors (space_id, text_hash, vector, embedding, created_at) "
                    "VALUES (%s, %s, %s, %s::vector, %s) ON CONFLICT DO NOTHING",
                    [(space_id, h, blob, vector_literal(blob), now) for h, blob in items],
                )
            else:
                cur.executemany(
                    "INSERT INTO text_vectors (space_id, text_hash, vector, created_at) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [(space_id, h, blob, now) for h, blob in items],
                )

    # -- the page vector index -------------------------------------------------------

    def vector_index(self, space_id: int, dims: int) -> PgVectorIndex | VectorIndex:
        if self.pgvector:
            return PgVectorIndex(self, space_id, dims)
        from memverbs.server.brain.vector_index import VectorIndex  # noqa: PLC0415 - numpy behind it

        key = (self.url, space_id)
        with _EXACT_LOCK:
            index = _EXACT.get(key)
            if index is None:
                index = _EXACT[key] = VectorIndex(space_id, dims, None)
        index.refresh(self)
        return index

    def build_vector_index(self, space_id: int, dims: int) -> bool:
        """pgvector: make sure the space's HNSW index exists (a brain copied in, or grown before it).
        Without it the exact scan needs nothing built ahead (no snapshot file on this backend)."""
        if not self.pgvector:
            return False
        with self.write() as db:
            db.execute(hnsw_index_sql(space_id, dims))
        return True

    def vector_index_kind(self) -> str:
        if self.pgvector:
            return "pgvector HNSW (cosine), in the database"
        return "exact scan (numpy) in each process: the brain does not use the vector extension (pgvector)"

    def max_text_vector_id(self) -> int:
        return self.aggregate("SELECT COALESCE(max(id), 0) FROM text_vectors")[0]

    def iter_text_vectors_after(
        self, space_id: int, after_id: int, block: int = 8192
    ) -> Iterator[tuple[list[int], list[bytes]]]:
        """Vectors of this space newer than `after_id`, oldest first, as ([ids], [blobs]) blocks."""
        while True:
            rows = self.query(
                "SELECT id, vector FROM text_vectors WHERE space_id = %s AND id > %s ORDER BY id LIMIT %s",
                (space_id, after_id, block),
            )
            if not rows:
                return
            yield [r[0] for r in rows], [bytes(r[1]) for r in rows]
            after_id = rows[-1][0]

    def text_vector_blob(self, vector_id: int) -> bytes | None:
        row = self.one("SELECT vector FROM text_vectors WHERE id = %s", (vector_id,))
        return bytes(row[0]) if row is not None else None

    def chunk_hits(self, source: str, vector_ids: list[int], *, allow_private: bool) -> list:
        if not vector_ids:
            return []
        return self.query(
            "SELECT v.id AS vector_id, c.text AS chunk, p.slug, p.title, p.body, p.owner FROM text_vectors v "
            "JOIN chunks c ON c.text_hash = v.text_hash AND c.source_id = %s JOIN pages p ON p.id = c.page_id "
            f"WHERE v.id = ANY(%s) AND {_LIVE_PAGE}",
            (source, list(vector_ids), allow_private),
        )

    def page_vector_ids(self, source: str, slugs: list[str], space_id: int) -> list:
        if not slugs:
            return []
        return self.query(
            "SELECT p.slug, v.id AS vector_id, c.text AS chunk FROM pages p JOIN chunks c ON c.page_id = p.id "
            "JOIN text_vectors v ON v.text_hash = c.text_hash AND v.space_id = %s "
            "WHERE p.source_id = %s AND p.slug = ANY(%s) AND p.deleted_at IS NULL",
            (space_id, source, list(slugs)),
        )

    # -- facts ---------------------------------------------------------------------------

    def facts_missing_vectors(self, space_id: int, now: int, *, after_fact: int, limit: int) -> list:
        return self.query(
            f"SELECT f.id, f.fact FROM facts f WHERE f.id > %s AND {_ACTIVE} "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.space_id = %s AND v.fact_id = f.id) "
            "ORDER BY f.id LIMIT %s",
            (after_fact, now, space_id, limit),
        )

    def fact_vectors_after(self, space_id: int, after_fact: int) -> list:
        return self.query(
            "SELECT fact_id, vector FROM fact_vectors WHERE space_id = %s AND fact_id > %s ORDER BY fact_id", (space_id, after_fact)
        )

    def fact_vector_count(self, space_id: int) -> int:
        return self.aggregate("SELECT count(*) FROM fact_vectors WHERE space_id = %s", (space_id,))[0]

    def store_fact_vectors(self, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        with self.write() as db:
            self._store_fact_vectors(db, space_id, items, now)

    def _store_fact_vectors(self, db: Conn, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        if not items:
            return
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO fact_vectors (fact_id, space_id, vector, created_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (fact_id, space_id) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at",
                [(fid, space_id, blob, now) for fid, blob in items],
            )

    def _bucket_vectors(self, db: Conn, source: str, entity_slug: str, visibility: str, space_id: int, now: int) -> list[Row]:
        rows = db.execute(
            "SELECT f.id, f.kind, f.fact_norm, f.valid_until, v.vector FROM facts f "
            "JOIN fact_vectors v ON v.fact_id = f.id AND v.space_id = %s "
            f"WHERE f.source_id = %s AND f.entity_slug = %s AND f.visibility = %s AND {_ACTIVE}",
            (space_id, source, entity_slug, visibility, now),
        ).fetchall()
        return rows

    # -- housekeeping -------------------------------------------------------------------

    def prune_vectors(self, keep_space_id: int | None) -> dict:
        with self.write() as db:
            orphans = db.execute(
                "DELETE FROM text_vectors WHERE NOT EXISTS (SELECT 1 FROM chunks c JOIN pages p ON p.id = c.page_id "
                "WHERE c.text_hash = text_vectors.text_hash AND p.deleted_at IS NULL)"
            ).rowcount
            other = db.execute("DELETE FROM text_vectors WHERE space_id IS DISTINCT FROM %s", (keep_space_id,)).rowcount
            other += db.execute("DELETE FROM fact_vectors WHERE space_id IS DISTINCT FROM %s", (keep_space_id,)).rowcount
        return {"orphan_vectors": orphans, "other_model_vectors": other}
