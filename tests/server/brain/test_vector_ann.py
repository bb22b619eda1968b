"""The HNSW graph over a big snapshot: shared through the file, incremental, exact cosines, recall near the scan.

Sizes are shrunk (the graph starts at a few hundred rows here, 20K in
production) so the real usearch graph is built, mapped and queried in a test.
"""

import numpy as np
import pytest

from memverbs.server.brain import vector_ann
from memverbs.server.brain.base import pack
from memverbs.server.brain.sqlite import SqliteBrain
from memverbs.server.brain.vector_index import ExactScores, GraphScores, VectorIndex

DIMS = 32


def embedding_like(rng, n: int) -> np.ndarray:
    """Clustered rows of low intrinsic dimension, unit length (what embeddings look like, roughly)."""
    centers = rng.standard_normal((20, 8)).astype(np.float32)
    z = centers[rng.integers(0, 20, n)] + 0.5 * rng.standard_normal((n, 8)).astype(np.float32)
    x = z @ rng.standard_normal((8, DIMS)).astype(np.float32) + 0.05 * rng.standard_normal((n, DIMS)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def big(tmp_path, monkeypatch):
    monkeypatch.setattr("memverbs.server.brain.vector_index.SNAPSHOT_MIN_TAIL", 100)
    monkeypatch.setattr(vector_ann, "ANN_MIN_ROWS", 500)
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    space = brain.space_id("testing", "m", DIMS, create=True)
    rows = embedding_like(np.random.default_rng(3), 1500)
    brain.store_text_vectors(space, [(f"h{i}", pack(r)) for i, r in enumerate(rows)], 1)
    yield brain, space, rows
    brain.close()


def exact_top(rows: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return [int(i) + 1 for i in np.argsort(-(rows @ q), kind="stable")[:k]]  # vector ids start at 1


def test_small_brain_keeps_the_exact_scan(tmp_path, monkeypatch):
    monkeypatch.setattr("memverbs.server.brain.vector_index.SNAPSHOT_MIN_TAIL", 10)
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    space = brain.space_id("testing", "m", DIMS, create=True)
    rows = embedding_like(np.random.default_rng(1), 300)
    brain.store_text_vectors(space, [(f"h{i}", pack(r)) for i, r in enumerate(rows)], 1)
    index = VectorIndex(space, DIMS, brain.vector_snapshot_dir, build_graphs=True)
    index.refresh(brain)
    assert len(index.base_ids) == 300 and not index.build_graph()
    assert isinstance(index.search(rows[0]), ExactScores)
    assert not list(brain.vector_snapshot_dir.glob("*.usearch"))


def test_graph_is_built_shared_and_answers_like_the_scan(big):
    brain, space, rows = big
    first = VectorIndex(space, DIMS, brain.vector_snapshot_dir)
    first.refresh(brain)
    assert isinstance(first.search(rows[0]), ExactScores)  # no graph yet: the exact scan answers
    assert first.build_graph()
    graphs = list(brain.vector_snapshot_dir.glob("*.hnsw.usearch"))
    assert [g.name for g in graphs] == [f"space-{space}-upto-1500.hnsw.usearch"]

    second = VectorIndex(space, DIMS, brain.vector_snapshot_dir)  # another process maps the same file
    second.refresh(brain)
    assert second.graph is not None and second.graph.rows == 1500
    rng = np.random.default_rng(9)
    hits = 0
    for qi in rng.integers(0, 1500, 40):
        q = rows[qi] + 0.05 * rng.standard_normal(DIMS).astype(np.float32)
        q /= np.linalg.norm(q)
        scored = second.search(q)
        assert isinstance(scored, GraphScores)
        top = scored.top(10)
        hits += len({vid for vid, _ in top} & set(exact_top(rows, q, 10)))
        for vid, cosine in top:  # cosines are the vectors' own, not the graph's quantised distances
            assert cosine == pytest.approx(float(rows[vid - 1] @ q), abs=1e-5)
    assert hits / 400 >= 0.9


def test_a_remember_never_rebuilds_the_graph(big):
    brain, space, rows = big
    index = VectorIndex(space, DIMS, brain.vector_snapshot_dir)
    index.refresh(brain)
    index.build_graph()
    graph = next(brain.vector_snapshot_dir.glob("*.hnsw.usearch"))
    stamp = graph.stat().st_mtime_ns

    new = embedding_like(np.random.default_rng(5), 1)[0]
    brain.store_text_vectors(space, [("h-new", pack(new))], 2)
    index.refresh(brain)
    assert index.tail_size == 1 and graph.stat().st_mtime_ns == stamp  # the tail holds it, scanned exactly
    scored = index.search(new)
    assert scored.top(1)[0] == (1501, pytest.approx(1.0, abs=1e-5))
    assert scored.of([1501, 7, 99_999]) == {1501: pytest.approx(1.0, abs=1e-5), 7: pytest.approx(float(rows[6] @ new), abs=1e-5)}


def test_a_newer_snapshot_extends_the_graph_in_the_background(big):
    brain, space, _rows = big
    index = VectorIndex(space, DIMS, brain.vector_snapshot_dir, build_graphs=True)
    index.refresh(brain)  # maps the 1500-row snapshot and starts building its graph aside
    index._builder.join(timeout=60)
    index.refresh(brain)
    assert index.graph is not None and index.graph.rows == 1500

    more = embedding_like(np.random.default_rng(6), 200)
    brain.store_text_vectors(space, [(f"m{i}", pack(r)) for i, r in enumerate(more)], 2)
    index.refresh(brain)  # 200 > 10 % of 1500: a new snapshot; the old graph still covers its prefix
    assert len(index.base_ids) == 1700 and index.graph.rows == 1500
    scored = index.search(more[50])
    assert scored.top(1)[0][0] == 1551  # found in the rows after the graph's prefix, scanned exactly
    index._builder.join(timeout=60)
    index.refresh(brain)
    assert index.graph.rows == 1700
    assert [g.name for g in brain.vector_snapshot_dir.glob("*.hnsw.usearch")] == [f"space-{space}-upto-1700.hnsw.usearch"]
    assert index.search(more[50]).top(1)[0][0] == 1551
