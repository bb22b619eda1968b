"""The in-memory vector index: exact cosines, incremental catch-up by id, growth without copies per row."""

import numpy as np

from memverbs.server.brain.base import pack
from memverbs.server.brain.sqlite import SqliteBrain
from memverbs.server.brain.vector_index import VectorIndex


def unit(*xs):
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_scan_top_and_catch_up(tmp_path):
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    space = brain.space_id("testing", "m", 3, create=True)
    brain.store_text_vectors(space, [("h1", pack(unit(1, 0, 0))), ("h2", pack(unit(0, 1, 0)))], 1)
    index = VectorIndex(space, 3)
    index.refresh(brain)
    assert len(index) == 2
    scores = index.scores(unit(1, 1, 0))
    top = index.top(scores, 5)
    assert [round(s, 3) for _, s in top] == [0.707, 0.707]

    # Another process adds a vector: only the new row is read.
    brain.store_text_vectors(space, [("h3", pack(unit(1, 0.1, 0)))], 2)
    other = brain.space_id("testing", "other", 3, create=True)
    brain.store_text_vectors(other, [("h9", pack(unit(0, 0, 1)))], 2)
    index.refresh(brain)
    assert len(index) == 3  # the other space's row is not ours
    scores = index.scores(unit(1, 0, 0))
    best_id, best = index.top(scores, 1)[0]
    assert best > 0.99
    assert index.scores_of(scores, [best_id, 999]) == {best_id: best}


def test_growth_keeps_rows(tmp_path):
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    space = brain.space_id("testing", "m", 4, create=True)
    index = VectorIndex(space, 4)
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((3000, 4)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for start in range(0, 3000, 700):
        brain.store_text_vectors(space, [(f"h{i}", pack(rows[i])) for i in range(start, min(start + 700, 3000))], 1)
        index.refresh(brain)
    assert len(index) == 3000
    assert np.allclose(index.scores(rows[2500])[2500], 1.0, atol=1e-5)


def test_snapshot_is_written_mapped_by_the_next_process_and_checked(tmp_path, monkeypatch):
    monkeypatch.setattr("memverbs.server.brain.vector_index.SNAPSHOT_MIN_TAIL", 10)
    brain = SqliteBrain.open(tmp_path / "b.db", create=True)
    space = brain.space_id("testing", "m", 2, create=True)
    brain.store_text_vectors(space, [(f"h{i}", pack(unit(1, i))) for i in range(20)], 1)
    snapshots = brain.vector_snapshot_dir
    first = VectorIndex(space, 2, snapshots)
    first.refresh(brain)
    assert first.tail_size == 0 and len(first) == 20  # the 20-row tail became a snapshot
    assert sorted(p.name for p in snapshots.iterdir()) == [f"space-{space}-upto-20.ids.npy", f"space-{space}-upto-20.vec.npy"]

    brain.store_text_vectors(space, [("h-new", pack(unit(-1, 0)))], 2)
    second = VectorIndex(space, 2, snapshots)  # another process: maps the snapshot, reads only the new row
    second.refresh(brain)
    assert len(second.base_ids) == 20 and second.tail_size == 1
    scores = second.scores(unit(-1, 0))
    assert second.top(scores, 1)[0][0] == 21

    # A snapshot that does not match the brain (restored from elsewhere) is not used.
    other = SqliteBrain.open(tmp_path / "other.db", create=True)
    other_space = other.space_id("testing", "m", 2, create=True)
    other.store_text_vectors(other_space, [(f"x{i}", pack(unit(i, 1))) for i in range(25)], 1)
    stale = VectorIndex(other_space, 2, snapshots)
    stale.refresh(other)
    assert len(stale) == 25 and np.allclose(stale.scores(unit(3, 1))[3], 1.0, atol=1e-5)
