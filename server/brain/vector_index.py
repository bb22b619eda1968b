"""The vector arm's index: one space's page vectors, scanned exactly with numpy.

Why an exact scan: this Python cannot load SQLite extensions (no sqlite-vec),
and an approximate index (IVF, HNSW) would be a second store to keep in step
across the several processes that share a brain, with a recall that depends on
tuning. A matrix-vector product gives every candidate its real cosine, which
the evidence labels need; benchmarks/RESULTS.md has its cost at 20K and 200K
chunks, and docs/architecture.md when to shrink `embeddings.dimensions`.

Two parts, because SQLite is slow to hand out 200K BLOBs (seconds) and every
harness session runs its own server process:

* a *snapshot*: the space's vectors up to some id, as two .npy files beside the
  brain (`<brain>.vectors/`), memory-mapped read-only. Mapped pages live in the
  OS page cache, so processes share one copy and a restart maps it in
  milliseconds. A snapshot is written atomically (temp file + rename) and never
  changed; a newer one replaces it by name.
* a *tail*: vectors with ids above the snapshot's, read from SQLite into memory
  on each refresh. Ids are never reused and writers commit in id order, so
  "ids above the last seen" is exactly what is new. When the tail outgrows a
  share of the snapshot, the process writes a new snapshot and maps it.

Past `vector_ann.ANN_MIN_ROWS` snapshot rows an exact scan of the snapshot costs
more than a query should (tens of ms at 200K × 768), so an HNSW graph over the
snapshot nominates candidates instead and only the rows after the graph's
prefix are scanned exactly (vector_ann.py); below it the scan is as fast and
nothing else is kept.

SQLite stays the source of truth: a snapshot is only a cache, checked against
the brain before use and rebuilt when missing, stale or unwritable (a
read-only home just keeps everything in the tail). Every vector of the space is
held, whichever source or page uses it (a vector serves every chunk with the
same text); hits are joined to live, visible chunks of the caller's source
before use, so pruned or edited-away vectors are never returned.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

import numpy as np

from memverbs.server.brain import vector_ann
from memverbs.server.brain.base import unpack

log = logging.getLogger("memverbs.vectors")


class VectorRows(Protocol):
    """What the index reads from its brain (vectors_store.VectorStore and the backend's way to page through them)."""

    def max_text_vector_id(self) -> int: ...
    def iter_text_vectors_after(self, space_id: int, after_id: int) -> Iterator[tuple[list[int], list[bytes]]]: ...
    def text_vector_blob(self, vector_id: int) -> bytes | None: ...


# One index per (brain, space) per process, shared by every connection to it (the HTTP server opens
# one per worker thread): its snapshot is mapped once and its tail read once.
_SHARED: dict[tuple[str, int], VectorIndex] = {}
_SHARED_LOCK = threading.Lock()

SNAPSHOT_MIN_TAIL = 2_000  # rows a tail may hold before a snapshot is worth writing
SNAPSHOT_SHARE = 0.10  # ... and its size relative to the snapshot's
_NAME = re.compile(r"^space-(\d+)-upto-(\d+)\.vec\.npy$")


class VectorIndex:
    """Shared by every connection of a process: refresh takes the caller's brain; a lock guards state."""

    def __init__(self, space_id: int, dims: int, snapshot_dir: Path | None = None, *, build_graphs: bool = False) -> None:
        self.space_id = space_id
        self.dims = dims
        self.snapshot_dir = snapshot_dir
        self._lock = threading.Lock()
        self.base = np.zeros((0, dims), dtype=np.float32)  # the mapped snapshot
        self.base_ids = np.zeros(0, dtype=np.int64)
        self.tail = np.zeros((0, dims), dtype=np.float32)
        self.tail_ids = np.zeros(0, dtype=np.int64)
        self.tail_size = 0
        self.last_seen = 0
        self.opened = False
        self.graph: vector_ann.AnnGraph | None = None  # covers a prefix of the snapshot's rows
        # Only a long-lived process (a server) builds a missing graph, on a background thread;
        # a one-shot CLI call would be killed mid-build. `memverbs reindex` builds it in the foreground.
        self.build_graphs = build_graphs
        self._builder: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self.base_ids) + self.tail_size

    @property
    def nbytes(self) -> int:
        """Memory of this process's own (unshared) part: the tail."""
        return self.tail[: self.tail_size].nbytes + self.tail_ids[: self.tail_size].nbytes

    @property
    def mapped_bytes(self) -> int:
        return self.base.nbytes + self.base_ids.nbytes

    # -- keeping current ---------------------------------------------------------------

    def refresh(self, brain: VectorRows) -> None:
        with self._lock:
            top = brain.max_text_vector_id()
            if not self.opened:
                self.opened = True
                self._map_snapshot(brain, top)
            if top > self.last_seen:
                seen = self.last_seen
                for ids, blobs in brain.iter_text_vectors_after(self.space_id, seen):
                    self._append(ids, blobs)
                    seen = ids[-1]
                # A row committed between the two reads is loaded now; never load it twice.
                self.last_seen = max(top, seen)
            if self.snapshot_dir is not None and self.tail_size > max(SNAPSHOT_MIN_TAIL, SNAPSHOT_SHARE * len(self.base_ids)):
                self._write_snapshot(self.snapshot_dir)
            self._follow_graph(start_build=self.build_graphs)

    # -- the graph ----------------------------------------------------------------------

    def _follow_graph(self, *, start_build: bool) -> None:
        """Adopt the newest graph that fits the snapshot; with `start_build`, build a missing one aside."""
        n = len(self.base_ids)
        if self.snapshot_dir is None or n < vector_ann.ANN_MIN_ROWS or (self.graph is not None and self.graph.rows == n):
            return
        found = vector_ann.newest(self.snapshot_dir, self.space_id, self.base_ids)
        if found is not None and (self.graph is None or found.rows > self.graph.rows):
            self.graph = found
        if start_build and (self.graph is None or self.graph.rows < n) and (self._builder is None or not self._builder.is_alive()):
            args = (self.snapshot_dir, self.space_id, self.base, self.base_ids, self.graph)
            self._builder = threading.Thread(target=self._build, args=args, name="memverbs-vector-graph", daemon=True)
            self._builder.start()

    @staticmethod
    def _build(
        snapshot_dir: Path, space_id: int, vectors: np.ndarray, ids: np.ndarray, base: vector_ann.AnnGraph | None
    ) -> None:
        try:
            vector_ann.build(snapshot_dir, space_id, vectors, ids, base, threads=1)  # one core: the other stays with the queries
        except Exception as exc:  # noqa: BLE001 - a cache: queries keep the exact scan, the next refresh retries
            log.warning("vector graph not built (%s); searches keep the exact scan", exc)

    def build_graph(self) -> bool:
        """Build the snapshot's graph now, in this thread (`memverbs reindex`); True when one is in use."""
        with self._lock:
            snapshot_dir, base, base_ids, graph = self.snapshot_dir, self.base, self.base_ids, self.graph
            if snapshot_dir is None or len(base_ids) < vector_ann.ANN_MIN_ROWS:
                return False
        vector_ann.build(snapshot_dir, self.space_id, base, base_ids, graph)
        with self._lock:
            self._follow_graph(start_build=False)
            return self.graph is not None

    def _append(self, ids: list[int], blobs: list[bytes]) -> None:
        need = self.tail_size + len(ids)
        if need > len(self.tail_ids):
            # Grow geometrically: a new page must not copy the whole tail.
            cap = max(need, int(len(self.tail_ids) * 1.5), 1024)
            grown = np.zeros((cap, self.dims), dtype=np.float32)
            grown[: self.tail_size] = self.tail[: self.tail_size]
            grown_ids = np.zeros(cap, dtype=np.int64)
            grown_ids[: self.tail_size] = self.tail_ids[: self.tail_size]
            self.tail, self.tail_ids = grown, grown_ids
        self.tail[self.tail_size : need] = unpack(blobs, self.dims)
        self.tail_ids[self.tail_size : need] = ids
        self.tail_size = need

    # -- snapshots ----------------------------------------------------------------------

    def _map_snapshot(self, brain: VectorRows, top: int) -> None:
        """Map the newest usable snapshot of this space, if any; its last row must match the brain's."""
        if self.snapshot_dir is None or not self.snapshot_dir.is_dir():
            return
        found = []
        for entry in self.snapshot_dir.iterdir():
            m = _NAME.match(entry.name)
            if m and int(m.group(1)) == self.space_id and int(m.group(2)) <= top:
                found.append((int(m.group(2)), entry))
        for upto, path in sorted(found, reverse=True):
            try:
                vec = np.load(path, mmap_mode="r")
                ids = np.load(path.with_name(path.name.replace(".vec.npy", ".ids.npy")), mmap_mode="r")
            except (OSError, ValueError):
                continue
            if vec.ndim != 2 or vec.shape[1] != self.dims or len(ids) != len(vec) or (len(ids) and ids[-1] > upto):
                continue
            # A brain restored from an older backup can reuse ids: the last row must be the same vector.
            if len(ids) and brain.text_vector_blob(int(ids[-1])) != np.asarray(vec[-1], dtype="<f4").tobytes():
                continue
            self.base, self.base_ids, self.last_seen = vec, ids, upto
            return

    def _write_snapshot(self, snapshot_dir: Path) -> None:
        ids = np.concatenate([self.base_ids, self.tail_ids[: self.tail_size]])
        upto = self.last_seen
        name = f"space-{self.space_id}-upto-{upto}"
        try:
            snapshot_dir.mkdir(parents=True, exist_ok=True)
            for suffix, array in ((".ids.npy", ids), (".vec.npy", None)):
                fd, tmp = tempfile.mkstemp(prefix=".snapshot.", dir=snapshot_dir)
                with os.fdopen(fd, "wb") as fh:
                    if array is None:  # the matrix, written in two parts without a full in-memory copy
                        _save_rows(fh, self.base, self.tail[: self.tail_size], self.dims)
                    else:
                        np.save(fh, array)
                os.replace(tmp, snapshot_dir / f"{name}{suffix}")
            vec = np.load(snapshot_dir / f"{name}.vec.npy", mmap_mode="r")
            mapped_ids = np.load(snapshot_dir / f"{name}.ids.npy", mmap_mode="r")
        except OSError:
            self.snapshot_dir = None  # a read-only home: keep everything in memory from now on
            return
        self.base, self.base_ids = vec, mapped_ids
        self.tail = np.zeros((0, self.dims), dtype=np.float32)
        self.tail_ids = np.zeros(0, dtype=np.int64)
        self.tail_size = 0
        for entry in snapshot_dir.iterdir():  # older snapshots of this space (mapped elsewhere: POSIX keeps them)
            m = _NAME.match(entry.name.replace(".ids.npy", ".vec.npy"))
            if m and int(m.group(1)) == self.space_id and int(m.group(2)) < upto:
                entry.unlink(missing_ok=True)

    # -- scoring --------------------------------------------------------------------------

    def search(self, query: np.ndarray) -> ExactScores | GraphScores:
        """One query's scores: every row scanned, or the graph's candidates plus the rows after its prefix."""
        with self._lock:
            graph, base, base_ids = self.graph, self.base, self.base_ids
            tail, tail_ids, n = self.tail, self.tail_ids, self.tail_size
        q = query.astype(np.float32, copy=False)
        if graph is None:
            return ExactScores(self, self.scores(q))
        m = graph.rows
        rest = np.concatenate([base[m:] @ q, tail[:n] @ q])
        rest_ids = np.concatenate([base_ids[m:], tail_ids[:n]])
        return GraphScores(q, graph, base, base_ids, tail[:n], tail_ids[:n], rest, rest_ids)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of `query` (unit length) with every row; rows are unit length, so a dot product."""
        with self._lock:  # a consistent view; growth and snapshots swap in new arrays
            base, tail, n = self.base, self.tail, self.tail_size
        q = query.astype(np.float32, copy=False)
        return np.concatenate([base @ q, tail[:n] @ q]) if n else np.asarray(base @ q)

    def _all_ids(self, n: int) -> np.ndarray:
        """The ids of the first n rows. Snapshot then tail is one ascending sequence that only ever
        grows at its end (a new snapshot is the old one plus the tail), so any later view has the
        view `scores` saw as its prefix."""
        with self._lock:
            base_ids, tail_ids, size = self.base_ids, self.tail_ids, self.tail_size
        ids = np.concatenate([base_ids, tail_ids[:size]]) if size else base_ids
        return ids[:n]

    def top(self, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k best (vector id, cosine), best first."""
        if len(scores) == 0 or k <= 0:
            return []
        ids = self._all_ids(len(scores))
        k = min(k, len(scores))
        part = np.argpartition(-scores, k - 1)[:k]
        order = part[np.argsort(-scores[part], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in order]

    def scores_of(self, scores: np.ndarray, vector_ids: list[int]) -> dict[int, float]:
        """The cosines of particular vectors (ids ascend through snapshot and tail: a binary search finds them)."""
        n = len(scores)
        if not vector_ids or n == 0:
            return {}
        ids = self._all_ids(n)
        wanted = np.asarray(vector_ids, dtype=np.int64)
        pos = np.searchsorted(ids, wanted)
        out: dict[int, float] = {}
        for vid, p in zip(vector_ids, pos, strict=True):
            if p < n and ids[p] == vid:
                out[vid] = float(scores[p])
        return out


def shared_index(
    brain: VectorRows, where: str, space_id: int, dims: int, snapshot_dir: Path | None, *, build_graphs: bool = False
) -> VectorIndex:
    """This process's index of a space's page vectors on the brain at `where`, brought up to date
    through `brain`'s connection; `snapshot_dir` None keeps every vector in memory (no snapshot)."""
    key = (where, space_id)
    with _SHARED_LOCK:
        index = _SHARED.get(key)
        if index is None:
            index = _SHARED[key] = VectorIndex(space_id, dims, snapshot_dir)
        # A long-lived process (a server) builds a big brain's graph aside; one-shot calls never do.
        index.build_graphs = index.build_graphs or build_graphs
    index.refresh(brain)
    return index


class ExactScores:
    """Every row's cosine, from the exact scan."""

    def __init__(self, index: VectorIndex, scores: np.ndarray) -> None:
        self.index, self.scores = index, scores

    def top(self, k: int) -> list[tuple[int, float]]:
        return self.index.top(self.scores, k)

    def of(self, vector_ids: list[int]) -> dict[int, float]:
        return self.index.scores_of(self.scores, vector_ids)


class GraphScores:
    """The graph's candidates from the snapshot prefix, exact scores for the rows after it.

    Every cosine returned is computed from the vector itself, never the graph's
    quantised distance."""

    def __init__(
        self,
        q: np.ndarray,
        graph: vector_ann.AnnGraph,
        base: np.ndarray,
        base_ids: np.ndarray,
        tail: np.ndarray,
        tail_ids: np.ndarray,
        rest: np.ndarray,
        rest_ids: np.ndarray,
    ) -> None:
        self.q, self.graph = q, graph
        self.base, self.base_ids, self.tail, self.tail_ids = base, base_ids, tail, tail_ids
        self.rest, self.rest_ids = rest, rest_ids

    def top(self, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        m = self.graph.rows
        found = self.graph.candidates(self.q, max(k, 10))
        pos = np.unique(np.searchsorted(self.base_ids[:m], found))
        pos = pos[pos < m]
        pos = pos[np.isin(self.base_ids[pos], found)]  # a key the graph padded with is no candidate
        ids = np.concatenate([np.asarray(self.base_ids[pos], dtype=np.int64), self.rest_ids])
        scores = np.concatenate([np.asarray(self.base[pos]) @ self.q, self.rest])
        k = min(k, len(scores))
        if k == 0:
            return []
        part = np.argpartition(-scores, k - 1)[:k]
        order = part[np.argsort(-scores[part], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in order]

    def of(self, vector_ids: list[int]) -> dict[int, float]:
        out: dict[int, float] = {}
        for vid in vector_ids:
            for ids, rows in ((self.base_ids, self.base), (self.tail_ids, self.tail)):
                p = int(np.searchsorted(ids, vid))
                if p < len(ids) and ids[p] == vid:
                    out[vid] = float(np.asarray(rows[p]) @ self.q)
                    break
        return out


def _save_rows(fh: IO[bytes], first: np.ndarray, second: np.ndarray, dims: int) -> None:
    """One .npy file holding `first` then `second`, written block by block."""
    rows = len(first) + len(second)
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False, "shape": (rows, dims)}
    np.lib.format.write_array_header_1_0(fh, header)
    for part in (first, second):
        for start in range(0, len(part), 16_384):
            fh.write(np.ascontiguousarray(part[start : start + 16_384], dtype=np.float32).tobytes())
