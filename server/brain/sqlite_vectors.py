"""Chunks and vectors in the SQLite brain: float32 BLOBs tagged with their space.

A space is the identity of a vector: (provider, model, dims). Vectors of one
space are only ever compared with each other; a model change leaves the old
ones in place (stale, ignored) until `memverbs reindex --prune` removes them.
numpy is imported only by the functions that decode vectors, which run only
when an embedding provider is configured.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.server.brain.base import pack, unpack

if TYPE_CHECKING:
    from memverbs.server.brain.vector_index import VectorIndex

from memverbs.server.brain.sqlite_base import SqliteBase, translate

__all__ = ["VectorStore", "pack", "unpack"]

_LIVE_PAGE = "p.deleted_at IS NULL AND (? OR p.visibility = 'world')"
_ACTIVE = "f.expired_at IS NULL AND (f.valid_until IS NULL OR f.valid_until > ?)"


# One index per (brain file, space) per process, shared by every connection to it (the HTTP
# server opens one per worker thread): its snapshot is mapped once and its tail read once.
_INDEXES: dict = {}
_INDEXES_LOCK = threading.Lock()


class VectorStore(SqliteBase):
    build_graphs = False  # set by the factory for a long-lived process (a server)

    # -- spaces ------------------------------------------------------------------

    def space_id(self, provider: str, model: str, dims: int, *, create: bool = False) -> int | None:
        row = self.one(
            "SELECT id FROM vector_spaces WHERE provider = ? AND model = ? AND dims = ?", (provider, model, dims)
        )
        if row is not None or not create:
            return row[0] if row is not None else None
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        with self.write() as db:
            db.execute(
                "INSERT OR IGNORE INTO vector_spaces (provider, model, dims, created_at) VALUES (?, ?, ?, ?)",
                (provider, model, dims, now_ms()),
            )
            return db.execute(
                "SELECT id FROM vector_spaces WHERE provider = ? AND model = ? AND dims = ?", (provider, model, dims)
            ).fetchone()[0]

    def space_for(self, provider: str, model: str, dims: int | None) -> int | None:
        """The space these vectors belong to; with dims unknown, the newest one of this provider and model."""
        if dims:
            return self.space_id(provider, model, dims)
        row = self.one(
            "SELECT id FROM vector_spaces WHERE provider = ? AND model = ? ORDER BY id DESC LIMIT 1", (provider, model)
        )
        return row[0] if row is not None else None

    def spaces(self) -> list[sqlite3.Row]:
        return self.query(
            "SELECT s.id, s.provider, s.model, s.dims, "
            "(SELECT count(*) FROM text_vectors v WHERE v.space_id = s.id) AS chunk_vectors, "
            "(SELECT count(*) FROM fact_vectors f WHERE f.space_id = s.id) AS fact_vectors "
            "FROM vector_spaces s ORDER BY s.id"
        )

    # -- chunks --------------------------------------------------------------------

    def _write_chunks(self, db: sqlite3.Connection, source: str, page_id: int, title: str | None, body: str) -> None:
        """Inside the page's write transaction: the chunks always match the saved text."""
        # Only a page write chunks: the hooks' reads skip the Markdown parser's imports and regexes.
        from memverbs.server.pages.chunks import chunk_page, embed_input, text_hash  # noqa: PLC0415

        db.execute("DELETE FROM chunks WHERE page_id = ?", (page_id,))
        for ord_, chunk in enumerate(chunk_page(title, body)):
            db.execute(
                "INSERT INTO chunks (source_id, page_id, ord, text, text_hash) VALUES (?, ?, ?, ?, ?)",
                (source, page_id, ord_, chunk, text_hash(embed_input(title, chunk))),
            )

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
        return self.aggregate(
            "SELECT count(*) FROM pages p WHERE p.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id)"
        )[0]

    def chunks_missing_vectors(self, space_id: int, *, after_chunk: int, limit: int) -> list[sqlite3.Row]:
        """Chunks of live pages with no vector in this space, by chunk id (keyset: reindex pages through them)."""
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE c.id > ? AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = ? AND v.text_hash = c.text_hash) "
            "ORDER BY c.id LIMIT ?",
            (after_chunk, space_id, limit),
        )

    def page_chunks_missing_vectors(self, source: str, slug: str, space_id: int) -> list[sqlite3.Row]:
        return self.query(
            "SELECT c.id, c.text_hash, c.text, p.title FROM chunks c JOIN pages p ON p.id = c.page_id "
            "WHERE p.source_id = ? AND p.slug = ? AND p.deleted_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM text_vectors v WHERE v.space_id = ? AND v.text_hash = c.text_hash) "
            "ORDER BY c.ord",
            (source, slug, space_id),
        )

    def missing_vector_counts(self, space_id: int | None, now: int) -> dict:
        """What reindex has left to do in a space (all sources): chunks and active facts without vectors."""
        sid = space_id if space_id is not None else -1
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

    def store_text_vectors(self, space_id: int, items: list[tuple[str, bytes]], now: int) -> None:
        with self.write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO text_vectors (space_id, text_hash, vector, created_at) VALUES (?, ?, ?, ?)",
                [(space_id, h, blob, now) for h, blob in items],
            )

    # -- the page vector index -------------------------------------------------------

    def max_text_vector_id(self) -> int:
        return self.aggregate("SELECT COALESCE(max(id), 0) FROM text_vectors")[0]

    def iter_text_vectors_after(
        self, space_id: int, after_id: int, block: int = 8192
    ) -> Iterator[tuple[list[int], list[bytes]]]:
        """Vectors of this space newer than `after_id`, oldest first, as ([ids], [blobs]) blocks."""
        try:
            cur = self.db.execute(
                "SELECT id, vector FROM text_vectors WHERE space_id = ? AND id > ? ORDER BY id", (space_id, after_id)
            )
            while rows := cur.fetchmany(block):
                yield [r[0] for r in rows], [r[1] for r in rows]
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    def text_vector_blob(self, vector_id: int) -> bytes | None:
        row = self.one("SELECT vector FROM text_vectors WHERE id = ?", (vector_id,))
        return bytes(row[0]) if row is not None else None

    @property
    def vector_snapshot_dir(self) -> Path:
        """Where this brain's memory-mapped vector snapshots live (a cache: safe to delete)."""
        return self.path.with_name(self.path.name + ".vectors")

    def vector_index(self, space_id: int, dims: int) -> VectorIndex:
        """This process's index of a space's page vectors, brought up to date through this connection."""
        from memverbs.server.brain.vector_index import VectorIndex  # noqa: PLC0415 - numpy behind it

        key = (str(self.path), space_id)
        with _INDEXES_LOCK:
            index = _INDEXES.get(key)
            if index is None:
                index = _INDEXES[key] = VectorIndex(space_id, dims, self.vector_snapshot_dir)
            # A long-lived process (a server) builds a big brain's graph aside; one-shot calls never do.
            index.build_graphs = index.build_graphs or self.build_graphs
        index.refresh(self)
        return index

    def build_vector_index(self, space_id: int, dims: int) -> bool:
        """Write the shared snapshot now, so no search pays for reading every vector out of SQLite, and
        a big snapshot's HNSW graph (vector_ann.py) in the foreground; True when a graph is in use."""
        from memverbs.server.brain.vector_index import VectorIndex  # noqa: PLC0415

        index = VectorIndex(space_id, dims, self.vector_snapshot_dir)
        index.refresh(self)
        return index.build_graph()

    def vector_index_kind(self) -> str:
        return "exact scan (numpy) over a memory-mapped snapshot; an HNSW graph (usearch) past 20,000 rows"

    def chunk_hits(self, source: str, vector_ids: list[int], *, allow_private: bool) -> list[sqlite3.Row]:
        """The live, visible chunks behind these vectors (one vector can serve several pages)."""
        if not vector_ids:
            return []
        marks = ",".join("?" * len(vector_ids))
        return self.query(
            "SELECT v.id AS vector_id, c.text AS chunk, p.slug, p.title, p.body, p.owner FROM text_vectors v "
            "JOIN chunks c ON c.text_hash = v.text_hash AND c.source_id = ? JOIN pages p ON p.id = c.page_id "
            f"WHERE v.id IN ({marks}) AND {_LIVE_PAGE}",
            (source, *vector_ids, allow_private),
        )

    def page_vector_ids(self, source: str, slugs: list[str], space_id: int) -> list[sqlite3.Row]:
        """(slug, vector_id, chunk) for every embedded chunk of these pages."""
        if not slugs:
            return []
        marks = ",".join("?" * len(slugs))
        return self.query(
            "SELECT p.slug, v.id AS vector_id, c.text AS chunk FROM pages p JOIN chunks c ON c.page_id = p.id "
            "JOIN text_vectors v ON v.text_hash = c.text_hash AND v.space_id = ? "
            f"WHERE p.source_id = ? AND p.slug IN ({marks}) AND p.deleted_at IS NULL",
            (space_id, source, *slugs),
        )

    # -- facts ---------------------------------------------------------------------------

    def facts_missing_vectors(self, space_id: int, now: int, *, after_fact: int, limit: int) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT f.id, f.fact FROM facts f WHERE f.id > ? AND {_ACTIVE} "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.space_id = ? AND v.fact_id = f.id) "
            "ORDER BY f.id LIMIT ?",
            (after_fact, now, space_id, limit),
        )

    def fact_vectors_after(self, space_id: int, after_fact: int) -> list[sqlite3.Row]:
        """Every fact vector of the space above a fact id, in id order: (fact_id, vector)."""
        return self.query(
            "SELECT fact_id, vector FROM fact_vectors WHERE space_id = ? AND fact_id > ? ORDER BY fact_id", (space_id, after_fact)
        )

    def fact_vector_count(self, space_id: int) -> int:
        return self.aggregate("SELECT count(*) FROM fact_vectors WHERE space_id = ?", (space_id,))[0]

    def store_fact_vectors(self, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        with self.write() as db:
            self._store_fact_vectors(db, space_id, items, now)

    def _store_fact_vectors(self, db: sqlite3.Connection, space_id: int, items: list[tuple[int, bytes]], now: int) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO fact_vectors (fact_id, space_id, vector, created_at) VALUES (?, ?, ?, ?)",
            [(fid, space_id, blob, now) for fid, blob in items],
        )

    def _bucket_vectors(self, db: sqlite3.Connection, source: str, entity_slug: str, visibility: str, space_id: int, now: int) -> list[sqlite3.Row]:
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
        with self.write() as db:
            orphans = db.execute(
                "DELETE FROM text_vectors WHERE NOT EXISTS (SELECT 1 FROM chunks c JOIN pages p ON p.id = c.page_id "
                "WHERE c.text_hash = text_vectors.text_hash AND p.deleted_at IS NULL)"
            ).rowcount
            other = db.execute("DELETE FROM text_vectors WHERE space_id IS NOT ?", (keep_space_id,)).rowcount
            other += db.execute("DELETE FROM fact_vectors WHERE space_id IS NOT ?", (keep_space_id,)).rowcount
        # Snapshots still hold the pruned rows (harmless, filtered at use, but memory): reindex rebuilds them.
        import shutil  # noqa: PLC0415 - reindex only; shutil (with zlib, bz2, lzma) stays off the hooks' path

        shutil.rmtree(self.vector_snapshot_dir, ignore_errors=True)
        return {"orphan_vectors": orphans, "other_model_vectors": other}
