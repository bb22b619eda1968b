"""The vector arm's index at scale: the HNSW graph against the exact scan, recall@10 and latency.

    python -m benchmarks.vector_scale [--sizes 20k,200k] [--dims 768] [--no-write]

Vectors are stored through the brain (`store_text_vectors`, as `memverbs reindex`
does), then the product's own code writes the snapshot and builds the graph
(`VectorIndex.refresh`, `build_graph`: what reindex runs). They are
embedding-like: topics in a 64-dimensional latent space seen through a random
linear map into `dims`, plus isotropic noise (real embeddings have a low
intrinsic dimension; uniformly random vectors, which have none, are the worst
case for any graph index and are not what a brain holds). Queries are stored
vectors plus noise.

Per size: the graph's build time and file size; then 200 queries, each timed
through `VectorIndex.search(q).top(100)` — the call the vector arm makes (100
candidates) — on the graph and on the exact scan of the same index, and
recall@10 = |graph top 10 ∩ exact top 10| / 10. The query embedding and the
SQLite join to chunks are excluded (benchmarks/hybrid_latency.py has the whole
recall call). Brains are cached under benchmarks/.cache/.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.results_file import replace_section
from memverbs.server.brain import vector_ann
from memverbs.server.brain.base import pack
from memverbs.server.brain.factory import open_brain
from memverbs.server.brain.location import BrainLocation
from memverbs.server.brain.vector_index import ExactScores, VectorIndex

CACHE = Path(__file__).resolve().parent / ".cache"
SIZES = {"20k": 20_000, "200k": 200_000}
LATENT, TOPICS = 64, 1000
BEGIN, END = "<!-- vector-scale:begin -->", "<!-- vector-scale:end -->"


def vectors(n: int, dims: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((TOPICS, LATENT)).astype(np.float32)
    proj = rng.standard_normal((LATENT, dims)).astype(np.float32) / np.sqrt(LATENT)
    out = np.empty((n, dims), dtype=np.float32)
    for lo in range(0, n, 10_000):
        hi = min(lo + 10_000, n)
        z = centres[rng.integers(0, TOPICS, hi - lo)] + 0.7 * rng.standard_normal((hi - lo, LATENT)).astype(np.float32)
        x = z @ proj + 0.15 * rng.standard_normal((hi - lo, dims)).astype(np.float32)
        out[lo:hi] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def machine() -> dict:
    import os  # noqa: PLC0415
    import platform  # noqa: PLC0415

    return {"nproc": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d"),
            "load_1min": round(os.getloadavg()[0], 2)}


def percentiles(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"n": len(s), "p50_ms": round(s[math.ceil(0.5 * len(s)) - 1], 3), "p99_ms": round(s[math.ceil(0.99 * len(s)) - 1], 3)}


def brain_with(n: int, dims: int) -> tuple[Path, np.ndarray]:
    rows = vectors(n, dims)
    path = CACHE / f"vectors-{n}x{dims}" / "brain.db"
    if not (path.parent / ".done").exists():
        shutil.rmtree(path.parent, ignore_errors=True)
        path.parent.mkdir(parents=True)
        brain = open_brain(BrainLocation("sqlite", path=path), create=True)
        space = brain.space_id("bench", "embedding-like", dims, create=True)
        for lo in range(0, n, 10_000):
            brain.store_text_vectors(space, [(f"h{i}", pack(rows[i])) for i in range(lo, min(lo + 10_000, n))], 1)
            print(f"\r  storing vectors {min(lo + 10_000, n):,}/{n:,}", end="", file=sys.stderr)
        print(file=sys.stderr)
        brain.close()
        (path.parent / ".done").write_text("ok")
    return path, rows


def measure(n: int, dims: int, queries: int = 200) -> dict:
    path, rows = brain_with(n, dims)
    brain = open_brain(BrainLocation("sqlite", path=path))
    space = brain.space_id("bench", "embedding-like", dims, create=False)
    index = VectorIndex(space, dims, brain.vector_snapshot_dir)
    index.refresh(brain)  # reads the vectors and writes the snapshot, as reindex does
    started = time.perf_counter()
    had = list(brain.vector_snapshot_dir.glob("*.hnsw.usearch"))
    has_graph = index.build_graph()
    build_s = None if had else round(time.perf_counter() - started, 1)
    graph_files = list(brain.vector_snapshot_dir.glob("*.hnsw.usearch"))
    rng = np.random.default_rng(11)
    picks = rng.integers(0, n, queries)
    qs = rows[picks] + 0.35 * rng.standard_normal((queries, dims)).astype(np.float32) / np.sqrt(dims) * 10
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    # Two passes, not interleaved: a full scan between graph queries would evict the graph from the CPU
    # caches, which a server answering only graph queries does not suffer.
    exact_ms, graph_ms, exact_top, recall = [], [], [], []
    for q in qs[:20]:  # warm the page cache
        ExactScores(index, index.scores(q)).top(100)
    for q in qs:
        t = time.perf_counter()
        exact_top.append(ExactScores(index, index.scores(q)).top(100))
        exact_ms.append((time.perf_counter() - t) * 1000)
    for q in qs[:50]:
        index.search(q).top(100)
    for q, exact in zip(qs, exact_top, strict=True):
        t = time.perf_counter()
        found = index.search(q).top(100)
        graph_ms.append((time.perf_counter() - t) * 1000)
        recall.append(len({v for v, _ in found[:10]} & {v for v, _ in exact[:10]}) / 10)
    brain.close()
    return {
        "rows": n, "dims": dims, "graph": has_graph, "graph_mb": round(sum(f.stat().st_size for f in graph_files) / 1e6, 1),
        "snapshot_mb": round(n * dims * 4 / 1e6, 1), "graph_build_s": build_s,
        "exact": percentiles(exact_ms), "graph_query": percentiles(graph_ms), "recall_at_10": round(float(np.mean(recall)), 3),
        "min_recall_at_10": round(float(np.min(recall)), 2),
    }


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        BEGIN, "## Vectors at scale: the HNSW graph against the exact scan", "",
        f"Measured {m['date']} on {m['nproc']} cores (1-minute load {m['load_1min']} at the end), Python {m['python']}, "
        "with `python -m benchmarks.vector_scale`. "
        "Each query is `VectorIndex.search(q).top(100)`, the call the vector arm makes, timed in-process: the query "
        f"embedding, the SQLite join to chunks and the transport are excluded. Graph: usearch HNSW, 8-bit vectors, "
        f"connectivity {vector_ann.CONNECTIVITY}, expansion {vector_ann.EXPANSION_SEARCH}; every returned cosine is "
        "recomputed exactly from the snapshot. Vectors are embedding-like synthetic (64-d latent topics mapped to "
        "the model's dims, plus noise), not a real model's. The machine was shared with other work: p99 is noisy.", "",
        "| rows × dims | graph build | graph file | exact scan p50 / p99 ms | graph p50 / p99 ms | recall@10 (min) | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        met = "met" if r["recall_at_10"] >= 0.95 and r["graph_query"]["p99_ms"] <= 10 else "**missed**"
        target = f"recall ≥ 0.95, p99 ≤ 10 ms: {met}" if r["rows"] >= 200_000 else "—"
        build = f"{r['graph_build_s']} s" if r["graph_build_s"] is not None else "(cached, not measured)"
        lines.append(
            f"| {r['rows']:,} × {r['dims']} | {build} | {r['graph_mb']} MB (snapshot {r['snapshot_mb']} MB) | "
            f"{r['exact']['p50_ms']} / {r['exact']['p99_ms']} | {r['graph_query']['p50_ms']} / {r['graph_query']['p99_ms']} | "
            f"{r['recall_at_10']} ({r['min_recall_at_10']}) | {target} |")
    lines += ["", f"Below {vector_ann.ANN_MIN_ROWS:,} snapshot rows no graph is built: the exact scan is as fast there.", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vector_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20k,200k")
    parser.add_argument("--dims", default="768")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    out = Path(__file__).resolve().parent / "results" / "vector-scale-latest.json"
    try:  # a cached graph was not built by this run: keep the build time the run that built it measured
        built = {(r["rows"], r["dims"]): r["graph_build_s"] for r in json.loads(out.read_text())["results"]}
    except (FileNotFoundError, ValueError, KeyError):
        built = {}
    results = [measure(SIZES[s], int(d)) for s in args.sizes.split(",") for d in args.dims.split(",")]
    for r in results:
        if r["graph_build_s"] is None:
            r["graph_build_s"] = built.get((r["rows"], r["dims"]))
    report = {"machine": machine(), "results": results}
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not args.no_write:
        replace_section(BEGIN, END, markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
