"""An approximate nearest-neighbour graph (HNSW, via usearch) over a prefix of the vector snapshot.

Why usearch: its index file can be memory-mapped (`view`), so every process on
a brain shares one copy in the OS page cache, as the snapshot itself is; and
measured at 200K × 768 on this machine (benchmarks/RESULTS.md, "Vectors at
scale") it meets recall@10 ≥ 0.95 against the exact scan well inside 10 ms.
hnswlib has no mapped view: every process would load its own copy.

The graph is a cache of a cache. It covers the snapshot's rows up to its
`upto` id (a prefix of the index's rows: ids only ever grow at the end), and
everything after that prefix — the rest of a newer snapshot and the tail — is
scanned exactly, so a `remember` never rebuilds anything. A newer graph is the
older one copied plus the rows added since (incremental), written beside the
snapshot atomically; builds run off the query path (a background thread, or
`memverbs reindex`), one process at a time per graph (an advisory file lock),
and until a graph exists queries use the exact scan. The graph stores 8-bit
quantised vectors (a quarter of the snapshot's size): it only nominates
candidates, and every candidate's cosine is recomputed exactly from the
snapshot, so the scores callers see are real cosines, never approximations.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from usearch.index import Index

ANN_MIN_ROWS = 20_000  # below this many snapshot rows the exact scan is as fast: no graph
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 384  # recall@10 ≈ 0.96 at 200K × 768 (benchmarks/RESULTS.md); ≥ the 100 candidates asked for
_NAME = re.compile(r"^space-(\d+)-upto-(\d+)\.hnsw\.usearch$")


def graph_name(space_id: int, upto: int) -> str:
    return f"space-{space_id}-upto-{upto}.hnsw.usearch"


class AnnGraph:
    """A mapped, read-only graph whose keys are the vector ids of the first `rows` snapshot rows."""

    def __init__(self, index: Index, upto: int, path: Path) -> None:
        self.index = index
        self.upto = upto
        self.path = path
        self.rows = len(index)

    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Vector ids of (about) the `count` nearest rows, unordered; exact scores are the caller's."""
        if count > self.index.expansion_search:
            # usearch's setter is unannotated, so mypy reads the property as read-only
            self.index.expansion_search = count  # type: ignore[misc]
        return np.asarray(self.index.search(query, count, threads=1).keys, dtype=np.int64)


def newest(snapshot_dir: Path, space_id: int, ids: np.ndarray) -> AnnGraph | None:
    """The newest graph of this space whose keys are exactly a prefix of `ids`, mapped; None if none fits."""
    if not snapshot_dir.is_dir():
        return None
    found = []
    for entry in snapshot_dir.iterdir():
        m = _NAME.match(entry.name)
        if m and int(m.group(1)) == space_id:
            found.append((int(m.group(2)), entry))
    for upto, path in sorted(found, reverse=True):
        prefix = int(np.searchsorted(ids, upto, side="right"))
        if prefix == 0 or int(ids[prefix - 1]) != upto:
            continue
        index = _view(path)
        if index is not None and len(index) == prefix:
            return AnnGraph(index, upto, path)
    return None


def _view(path: Path) -> Index | None:
    from usearch.index import Index  # noqa: PLC0415 - only brains big enough for a graph pay the import

    try:
        index = Index.restore(str(path), view=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if index is not None:
        index.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # as in AnnGraph.candidates
    return index


def build(snapshot_dir: Path, space_id: int, vectors: np.ndarray, ids: np.ndarray, base: AnnGraph | None,
          threads: int = 0) -> Path | None:
    """Write the graph of all of `ids` (extending `base`, which covers a prefix of them); None if another
    process is building it or the home is read-only. Safe to run beside readers: written aside, renamed in.
    `threads` 0 uses every core; usearch releases the GIL while it adds, so a server keeps answering."""
    from usearch.index import Index  # noqa: PLC0415

    upto = int(ids[-1])
    target = snapshot_dir / graph_name(space_id, upto)
    if target.exists():
        return target
    try:
        lock = open(snapshot_dir / f".{target.name}.lock", "w")  # noqa: SIM115 - held for the whole build
    except OSError:
        return None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # another process is building this graph: it will appear beside the snapshot
        if target.exists():
            return target
        # A private copy of the base to extend; without one (or if it no longer loads), from scratch.
        index = Index.restore(str(base.path), view=False) if base is not None else None
        if index is not None and base is not None:
            start = base.rows
        else:
            index = Index(ndim=vectors.shape[1], metric="ip", dtype="i8", connectivity=CONNECTIVITY,
                          expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
            start = 0
        for lo in range(start, len(ids), 16_384):
            hi = min(lo + 16_384, len(ids))
            index.add(np.asarray(ids[lo:hi], dtype=np.uint64), np.ascontiguousarray(vectors[lo:hi], dtype=np.float32),
                      threads=threads)
        _remove_abandoned(snapshot_dir)
        fd, tmp = tempfile.mkstemp(prefix=f".graph.{os.getpid()}.", dir=snapshot_dir)
        os.close(fd)
        try:
            index.save(tmp)
            os.replace(tmp, target)
        except (OSError, RuntimeError):
            Path(tmp).unlink(missing_ok=True)
            return None
        for entry in snapshot_dir.iterdir():  # older graphs of this space (mapped elsewhere: POSIX keeps them)
            m = _NAME.match(entry.name)
            if m and int(m.group(1)) == space_id and int(m.group(2)) < upto:
                entry.unlink(missing_ok=True)
                (snapshot_dir / f".{entry.name}.lock").unlink(missing_ok=True)
    return target


def _remove_abandoned(snapshot_dir: Path) -> None:
    """Half-written graphs of processes that died mid-build (a server stopped while building)."""
    for entry in snapshot_dir.glob(".graph.*"):
        pid = entry.name.split(".")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            entry.unlink(missing_ok=True)
