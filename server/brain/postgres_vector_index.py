"""How the Postgres brain answers the vector arm: pgvector's HNSW index, or an exact scan in each process.

Vectors are stored as SQLite stores them (vectors_store.py). The vector arm is answered in one of
two ways, and `vector_index_kind` (doctor) says which:

* **pgvector** (the `vector` extension is installed): every page vector is also an `embedding
  vector` value, and each space has an HNSW index over it (cosine distance), created with the
  space. A query asks the server for its nearest vectors; cosines are real cosines (1 − cosine
  distance).
* **exact scan** (no pgvector on the server): the SQLite backend's in-memory index
  (`vector_index.VectorIndex`), without a snapshot file: the space's vectors are read once per
  process and then only the ones above the last id seen (writers commit in id order: see postgres.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from memverbs.server.brain.postgres_base import PostgresBase
from memverbs.server.brain.vectors_store import VectorStore

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.brain.store import Tx
    from memverbs.server.brain.vector_index import VectorIndex

HNSW_EF_SEARCH_MAX = 1000  # pgvector's ceiling for hnsw.ef_search


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


class PostgresVectors(VectorStore, PostgresBase):
    def _space_created(self, db: Tx, space_id: int, dims: int) -> None:
        if self.pgvector:
            db.execute(hnsw_index_sql(space_id, dims))

    def _insert_text_vectors(self, db: Tx, space_id: int, items: list[tuple[str, bytes]], now: int) -> None:
        if not self.pgvector:
            super()._insert_text_vectors(db, space_id, items, now)
            return
        db.executemany(
            "INSERT INTO text_vectors (space_id, text_hash, vector, embedding, created_at) "
            "VALUES (?, ?, ?, ?::vector, ?) ON CONFLICT DO NOTHING",
            [(space_id, h, blob, vector_literal(blob), now) for h, blob in items],
        )

    def iter_text_vectors_after(
        self, space_id: int, after_id: int, block: int = 8192
    ) -> Iterator[tuple[list[int], list[bytes]]]:
        """Vectors of this space newer than `after_id`, oldest first, as ([ids], [blobs]) blocks: one
        keyset page per block, each on a pooled connection held only for its read."""
        while True:
            rows = self.query(
                "SELECT id, vector FROM text_vectors WHERE space_id = ? AND id > ? ORDER BY id LIMIT ?",
                (space_id, after_id, block),
            )
            if not rows:
                return
            yield [r[0] for r in rows], [bytes(r[1]) for r in rows]
            after_id = rows[-1][0]

    def vector_index(self, space_id: int, dims: int) -> PgVectorIndex | VectorIndex:
        if self.pgvector:
            return PgVectorIndex(self, space_id, dims)
        from memverbs.server.brain.vector_index import shared_index  # noqa: PLC0415 - numpy behind it

        return shared_index(self, self.url, space_id, dims, None)

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
