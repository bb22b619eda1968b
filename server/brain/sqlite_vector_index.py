"""How the SQLite brain answers the vector arm: an in-process index over a memory-mapped snapshot.

The index itself (snapshot, tail, graph) is `vector_index.VectorIndex`; this is the brain's side
of it: where the snapshot lives (beside the brain file), how the index reads new vectors out of
SQLite (one streamed statement), and that a prune leaves no stale snapshot behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from memverbs.server.brain.sqlite_base import SqliteBase, translate
from memverbs.server.brain.vectors_store import VectorStore

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from pathlib import Path

    from memverbs.server.brain.vector_index import VectorIndex


class SqliteVectors(VectorStore, SqliteBase):
    build_graphs = False  # set by the factory for a long-lived process (a server)

    @property
    def vector_snapshot_dir(self) -> Path:
        """Where this brain's memory-mapped vector snapshots live (a cache: safe to delete)."""
        return self.path.with_name(self.path.name + ".vectors")

    def iter_text_vectors_after(
        self, space_id: int, after_id: int, block: int = 8192
    ) -> Iterator[tuple[list[int], list[bytes]]]:
        """Vectors of this space newer than `after_id`, oldest first, as ([ids], [blobs]) blocks.

        One statement, read block by block: SQLite answers it through the (space_id, text_hash)
        index and one sort, which a LIMIT per block would repeat over every row left."""
        try:
            cur = self.db.execute(
                "SELECT id, vector FROM text_vectors WHERE space_id = ? AND id > ? ORDER BY id", (space_id, after_id)
            )
            while rows := cur.fetchmany(block):
                yield [r[0] for r in rows], [r[1] for r in rows]
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.file) from exc

    def vector_index(self, space_id: int, dims: int) -> VectorIndex:
        """This process's index of a space's page vectors, brought up to date through this connection."""
        from memverbs.server.brain.vector_index import shared_index  # noqa: PLC0415 - numpy behind it

        return shared_index(self, self.file, space_id, dims, self.vector_snapshot_dir, build_graphs=self.build_graphs)

    def build_vector_index(self, space_id: int, dims: int) -> bool:
        """Write the shared snapshot now, so no search pays for reading every vector out of SQLite, and
        a big snapshot's HNSW graph (vector_ann.py) in the foreground; True when a graph is in use."""
        from memverbs.server.brain.vector_index import VectorIndex  # noqa: PLC0415

        index = VectorIndex(space_id, dims, self.vector_snapshot_dir)
        index.refresh(self)
        return index.build_graph()

    def vector_index_kind(self) -> str:
        return "exact scan (numpy) over a memory-mapped snapshot; an HNSW graph (usearch) past 20,000 rows"

    def prune_vectors(self, keep_space_id: int | None) -> dict:
        counts = super().prune_vectors(keep_space_id)
        # Snapshots still hold the pruned rows (harmless, filtered at use, but memory): reindex rebuilds them.
        import shutil  # noqa: PLC0415 - reindex only; shutil (with zlib, bz2, lzma) stays off the hooks' path

        shutil.rmtree(self.vector_snapshot_dir, ignore_errors=True)
        return counts
