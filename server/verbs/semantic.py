"""The vector side of the verbs: embedding queries, pages and facts, and the vector arm of search.

Everything here runs only when an embedding provider is configured, and every
provider failure surfaces as ProviderError for the caller to degrade on: a
verb never fails because an embedding call did.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memverbs.server.brain.base import pack
from memverbs.server.errors import ProviderError
from memverbs.server.pages.chunks import embed_input
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.brain.base import ScoredQuery
    from memverbs.server.context import VerbContext
    from memverbs.server.providers.embeddings import Embedder

log = logging.getLogger("memverbs.embeddings")

CANDIDATE_FLOOR = 100  # chunks scored before grouping by page: enough that shared or stale vectors do not crowd pages out
# Every page has some cosine with every query; only those near the best one are
# the vector arm's hits (a relative cut: absolute cosines differ from model to model).
RELATIVE_CUTOFF = 0.6


def embedder(ctx: VerbContext) -> Embedder | None:
    return ctx.providers.embedder() if ctx.providers is not None else None


def embed(ctx: VerbContext, texts: list[str], *, create_space: bool = True) -> tuple[int | None, np.ndarray]:
    """(space id, unit rows) for these texts; raises ProviderError.

    Reads pass `create_space=False` (a space nobody stored vectors in is None): search stays a pure read.
    """
    emb = embedder(ctx)
    if emb is None:
        raise ProviderError("no_key", "no embedding provider", "Configure embeddings (`memverbs docs configuration`).")
    rows = emb.embed(texts)
    if rows.shape[0] != len(texts):
        raise ProviderError("provider_error", "embeddings provider returned the wrong number of vectors")
    return ctx.brain.space_id(emb.provider, emb.model, int(rows.shape[1]), create=create_space), rows


@dataclass
class VectorArm:
    """One query's cosines against the page vectors of its space (exact, or through the graph), and what they point at."""

    ctx: VerbContext
    space_id: int
    scored: ScoredQuery  # one query's scores, from whichever index the brain keeps
    allow_private: bool

    def pages(self, k: int) -> list[dict]:
        """The k pages with the best chunk cosine: {slug, title, body, chunk, cosine}, best first."""
        top = self.scored.top(max(k * 4, CANDIDATE_FLOOR))
        cosine = dict(top)
        best: dict[str, dict] = {}
        rows = self.ctx.brain.chunk_hits(self.ctx.source, [vid for vid, _ in top], allow_private=self.allow_private)
        for r in rows:
            score = cosine[r["vector_id"]]
            held = best.get(r["slug"])
            if held is None or score > held["cosine"]:
                best[r["slug"]] = {"slug": r["slug"], "title": r["title"], "body": r["body"], "chunk": r["chunk"], "cosine": score,
                                  "owner": r["owner"]}
        ranked = sorted(best.values(), key=lambda h: (-h["cosine"], h["slug"]))
        if not ranked or ranked[0]["cosine"] <= 0:
            return []
        cut = ranked[0]["cosine"] * RELATIVE_CUTOFF
        return [h for h in ranked if h["cosine"] >= cut][:k]

    def cosines(self, slugs: list[str]) -> dict[str, tuple[float, str]]:
        """Best (cosine, chunk) of particular pages, e.g. ones only the keyword arm found."""
        rows = self.ctx.brain.page_vector_ids(self.ctx.source, slugs, self.space_id)
        scored = self.scored.of([r["vector_id"] for r in rows])
        out: dict[str, tuple[float, str]] = {}
        for r in rows:
            score = scored.get(r["vector_id"])
            if score is not None and (r["slug"] not in out or score > out[r["slug"]][0]):
                out[r["slug"]] = (score, r["chunk"])
        return out


def vector_arm(ctx: VerbContext, query: str, *, allow_private: bool) -> VectorArm | None:
    """Embed the query and score it against the index; None when this source has nothing embedded."""
    space_id, rows = embed(ctx, [query], create_space=False)
    if space_id is None:
        return None
    index = ctx.brain.vector_index(space_id, int(rows.shape[1]))
    if len(index) == 0:
        return None
    return VectorArm(ctx, space_id, index.search(rows[0]), allow_private)


def embed_page(ctx: VerbContext, slug: str) -> int:
    """Embed a just-saved page's chunks that have no vector yet; best effort, returns how many were embedded.

    A failure leaves the page keyword-searchable and `memverbs reindex` picks it up later.
    """
    emb = embedder(ctx)
    if emb is None:
        return 0
    try:
        # Before any call the embedder may not know its dims; the newest space of its model stands in
        # (none yet: every chunk is missing, and embedding them names the space).
        known = ctx.brain.space_for(emb.provider, emb.model, emb.dims)
        todo = ctx.brain.page_chunks_missing_vectors(ctx.source, slug, known if known is not None else -1)
        if not todo:
            return 0
        space_id, rows = embed(ctx, [embed_input(r["title"], r["text"]) for r in todo])
        assert space_id is not None, "embed names the space it creates"
        ctx.brain.store_text_vectors(space_id, [(r["text_hash"], pack(v)) for r, v in zip(todo, rows, strict=True)], now_ms())
        return len(todo)
    except ProviderError as exc:
        log.warning("page %s not embedded (%s): %s; `memverbs reindex` will retry", slug, exc.kind, exc.message)
        return 0
