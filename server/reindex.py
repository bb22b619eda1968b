"""Reindex: chunk what is unchunked, then embed every chunk and active fact with no vector for the model.

Work is done in small batches, each stored in its own short write transaction,
so a brain stays usable while it runs, an interruption loses at most one batch,
and running it again continues where it stopped (it only ever looks for what is
missing). Rate limits, timeouts and network blips are retried with backoff; a
rejected key or unknown model stops at once with the fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from memverbs.server.brain.base import Brain, pack
from memverbs.server.errors import ProviderError
from memverbs.server.pages.chunks import embed_input
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.providers.embeddings import Embedder

RETRYABLE = ("rate_limited", "timeout", "network")
RETRIES = 4

Progress = Callable[[str, int, int], None]  # (stage, done, total)

T = TypeVar("T")


@dataclass
class ReindexReport:
    provider: str
    model: str
    dims: int | None = None
    pages_chunked: int = 0
    chunks_embedded: int = 0
    facts_embedded: int = 0
    pruned: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def reindex(
    brain: Brain,
    embedder: Embedder,
    *,
    progress: Progress | None = None,
    prune: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> ReindexReport:
    report = ReindexReport(embedder.provider, embedder.model, embedder.dims)
    tell = progress or (lambda stage, done, total: None)
    batch = getattr(embedder, "batch_size", 64)

    todo = brain.unchunked_page_count()
    tell("chunking pages", 0, todo)
    while done := brain.chunk_unchunked_pages():
        report.pages_chunked += done
        tell("chunking pages", report.pages_chunked, todo)

    space = brain.space_for(embedder.provider, embedder.model, embedder.dims)
    counts = brain.missing_vector_counts(space, now_ms())

    def embed(texts: list[str]) -> np.ndarray:
        nonlocal space
        rows = _with_retries(lambda: embedder.embed(texts), sleep)
        report.dims = int(rows.shape[1])
        space = brain.space_id(embedder.provider, embedder.model, report.dims, create=True)
        return rows

    after = 0
    tell("embedding chunks", 0, counts["chunks"])
    while rows := brain.chunks_missing_vectors(space if space is not None else -1, after_chunk=after, limit=batch):
        after = rows[-1]["id"]
        unique = {r["text_hash"]: embed_input(r["title"], r["text"]) for r in rows}
        vectors = embed(list(unique.values()))
        assert space is not None, "embed() names the space"
        brain.store_text_vectors(space, [(h, pack(v)) for h, v in zip(unique, vectors, strict=True)], now_ms())
        report.chunks_embedded += len(rows)
        tell("embedding chunks", min(report.chunks_embedded, counts["chunks"]), counts["chunks"])

    after = 0
    tell("embedding facts", 0, counts["facts"])
    while rows := brain.facts_missing_vectors(space if space is not None else -1, now_ms(), after_fact=after, limit=batch):
        after = rows[-1]["id"]
        vectors = embed([r["fact"] for r in rows])
        assert space is not None, "embed() names the space"
        brain.store_fact_vectors(space, [(r["id"], pack(v)) for r, v in zip(rows, vectors, strict=True)], now_ms())
        report.facts_embedded += len(rows)
        tell("embedding facts", min(report.facts_embedded, counts["facts"]), counts["facts"])

    if prune:
        report.pruned = brain.prune_vectors(space)
    if space is not None and report.dims:
        # Build the index now (SQLite: the shared snapshot), so no search pays for it.
        tell("writing snapshot", 0, 1)
        graph = brain.build_vector_index(space, report.dims)
        tell("writing snapshot", 1, 1)
        if graph:  # a big brain's ANN graph, built here rather than behind a server
            tell("building vector graph", 1, 1)
    return report


def _with_retries(call: Callable[[], T], sleep: Callable[[float], None]) -> T:
    for attempt in range(RETRIES + 1):
        try:
            return call()
        except ProviderError as exc:
            if exc.kind not in RETRYABLE or attempt == RETRIES:
                raise
            sleep(min(2**attempt, 30))
    raise AssertionError("unreachable")
