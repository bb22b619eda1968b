"""Facts ranked by a question: recall's facts arm when it has a `query`, and the facts `search` finds.

Keyword ranking is BM25 over the facts' index terms (server/terms.py: folded, stemmed,
function words left out of the query, CJK and Thai by character pairs), computed by the
same formula on both backends. Two cues multiply a fact's score: the question names the
fact's entity (its slug's last segment, e.g. "alice" for people/alice), because a question
about someone is most often answered by what was recorded about them; and the question names
a time ("in June", "on 13 October, 2023") when the fact was said (when.py: the date its
provenance names, else its recording time), whose words then leave the keyword query.

With an embedding provider whose space holds fact vectors (remember embeds every fact it
stores; `memverbs reindex` fills older ones), a second score is the cosine of the query
with each fact. A fact matches when it holds a query term, or, sharing none, when it is
MEANING_MATCH close: a question about nothing the brain holds finds nothing. The candidates
are the union of both arms' matches, each with its exact score on both (its BM25 is computed
even when only the vector arm found it, its cosine even when only the keyword arm did), so a
fact's place never depends on which arm happened to nominate it. They are fused by their
scores, not their ranks: each arm's score divided by the best candidate's on that arm (a
cosine measured from the query's background, `_Meaning`), the two averaged, times the cues.
Ranks (reciprocal rank fusion) throw away how far apart two facts are: a fact that ties on
keywords and is far closer in meaning would lose to a hair's lead on one arm. A provider that
fails leaves the keyword ranking: never an error.
"""

from __future__ import annotations

import re
import weakref
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from memverbs.server.brain.base import FactFilter, Row, SearchQuery
from memverbs.server.errors import ProviderError
from memverbs.server.names import collapse
from memverbs.server.terms import query_terms, words
from memverbs.server.timeparse import iso
from memverbs.server.verbs.when import Window, said_on, windows

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.brain.base import Brain
    from memverbs.server.context import VerbContext

K = TypeVar("K", int, str)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
POOL = 100  # candidates each arm ranks before fusion and the cut to the caller's limit
KEYWORD_SHARE = 0.5  # of the fused score; the vector arm's is the rest: neither arm is trusted over the other
ENTITY_BOOST = 1.0
TIME_BOOST = 1.0
# A fact that shares no word with the question matches it only this close in meaning, else a
# question about nothing the brain holds would still "find" its nearest facts. Cosines are the
# model's own scale: with all-MiniLM-L6-v2, fifty questions on topics a brain never mentions
# reached 0.10-0.36 with their closest fact; a restatement in other words reaches 0.5 and more.
MEANING_MATCH = 0.4


def with_limit(f: FactFilter, limit: int) -> FactFilter:
    return FactFilter(f.arm, f.now, f.world_only, f.active_only, limit, f.entity_slug, f.session_id, f.since)


@lru_cache(maxsize=4096)
def _entity_terms(slug: str) -> frozenset[str]:
    return frozenset(words(slug.rsplit("/", 1)[-1].replace("-", " ")))


def _said_inside(row: Row, times: list[Window]) -> bool:
    said = said_on(row["provenance"], row["valid_from"])
    return any(w.holds(said) for w in times)


def _cue(row: Row, terms: set[str], times: list[Window]) -> float:
    """How much a fact's score counts: more when the question names its entity, more when it names when it was said."""
    slug = row["entity_slug"]
    named = 1.0 + ENTITY_BOOST if slug and _entity_terms(slug) & terms else 1.0
    return named * (1.0 + TIME_BOOST if times and _said_inside(row, times) else 1.0)


def rank_facts(ctx: VerbContext, query: str, f: FactFilter, limit: int) -> list[Row]:
    """The facts arm `f` allows that the query finds, best first, at most `limit`."""
    times = windows(query)
    words_of = query
    for w in times:  # a named time is a cue about when, not words to find
        words_of = words_of.replace(w.text, " ")
    terms = query_terms(words_of) or query_terms(query)
    wanted = set(terms)
    search = SearchQuery.of(terms, "any")
    pool = with_limit(f, max(limit, POOL))
    brain, source = ctx.brain, ctx.source
    rows: dict[int, Row] = {}
    bm25: dict[int, float] = {}
    for r in brain.facts_ranked(source, pool, search, limit=pool.limit) if terms else []:
        rows[r["id"]] = r
        bm25[r["id"]] = float(r["score"])
    vector = _vector_arm(ctx, query, pool)
    if vector is None:
        keyword = {i: s * _cue(rows[i], wanted, times) for i, s in bm25.items()}
        order = sorted(keyword, key=lambda i: (-keyword[i], -i))
        return [rows[i] for i in order[:limit]]
    meaning, vector_rows = vector
    for r in vector_rows:
        rows.setdefault(r["id"], r)
    only_vector = [i for i in rows if i not in bm25]
    if terms and only_vector:
        for r in brain.facts_ranked(source, pool, search, limit=len(only_vector), among=only_vector):
            bm25[r["id"]] = float(r["score"])
    fused = fuse(bm25, meaning.above_background(list(rows)))
    scored = {i: s * _cue(rows[i], wanted, times) for i, s in fused.items()}
    order = sorted(scored, key=lambda i: (-scored[i], -i))
    return [rows[i] for i in order[:limit]]


def fuse(bm25: dict[K, float], cosine: dict[K, float]) -> dict[K, float]:
    """Each candidate's share of the best BM25 and of the best cosine, averaged (KEYWORD_SHARE
    for the first); a candidate absent from an arm scores 0 there, and one absent from both is left out.
    Facts (by id) and pages (by slug, search.hybrid_search) are fused by this one rule."""
    top_bm25 = max(bm25.values(), default=0.0)
    top_cosine = max(cosine.values(), default=0.0)
    fused: dict[K, float] = {}
    for i in bm25.keys() | cosine.keys():
        keyword = bm25.get(i, 0.0) / top_bm25 if top_bm25 > 0 else 0.0
        meaning = cosine.get(i, 0.0) / top_cosine if top_cosine > 0 else 0.0
        if keyword > 0 or meaning > 0:
            fused[i] = KEYWORD_SHARE * keyword + (1.0 - KEYWORD_SHARE) * meaning
    return fused


SNIPPET_CHARS = 300


def search_facts(ctx: VerbContext, query: str, limit: int, now: int) -> list[dict]:
    """The `search` op's facts: active facts the query finds, best first, with a snippet.
    Untrusted callers see world-visible facts only, as in recall."""
    f = FactFilter("recent", now, world_only=not ctx.caller.reads_private, active_only=True, limit=limit)
    terms = set(query_terms(query))
    return [
        {
            "fact_id": str(r["id"]),
            "fact": r["fact"],
            "snippet": snippet(r["fact"], terms),
            "kind": r["kind"],
            "entity_slug": r["entity_slug"],
            "valid_from": iso(r["valid_from"]),
            "provenance": r["provenance"],
        }
        for r in rank_facts(ctx, query, f, limit)
    ]


def snippet(text: str, terms: set[str], size: int = SNIPPET_CHARS) -> str:
    """The fact itself when short; else the `size` characters around its first matching word, with "…" where it goes on."""
    text = collapse(text)
    if len(text) <= size:
        return text
    at = next((m.start() for m in _TOKEN.finditer(text) if set(words(m.group())) & terms), 0)
    start = max(0, min(at - size // 4, len(text) - size))
    return ("…" if start else "") + text[start : start + size].strip() + ("…" if start + size < len(text) else "")


class _Meaning:
    """The query's cosines with the facts of its space, and their background: the mean cosine of the
    query with every fact there. Most facts of a brain have nothing to do with a given question, so
    the mean is what "unrelated" scores for this query and this model; a cosine counts by how far it
    stands above it. Divided by the best candidate's as they come (the share of the best), raw cosines
    are bunched near 1 (a model's unrelated texts already score 0.1-0.3), and then any cue that
    multiplies the fused score, such as the question naming the fact's entity, outweighs the
    difference in meaning; measured from the background they spread as keyword scores do."""

    def __init__(self, sims: np.ndarray, position: dict[int, int]) -> None:
        self.sims, self.position = sims, position
        self.background = float(sims.mean())

    def above_background(self, ids: list[int]) -> dict[int, float]:
        out: dict[int, float] = {}
        for i in ids:
            at = self.position.get(i)
            if at is not None and (lift := float(self.sims[at]) - self.background) > 0:
                out[i] = lift
        return out


def _vector_arm(ctx: VerbContext, query: str, f: FactFilter) -> tuple[_Meaning, list[Row]] | None:
    """The query's cosines with the facts' vectors, and the facts that match it by meaning alone
    (cosine ≥ MEANING_MATCH), best first; None without vectors to compare."""
    providers = ctx.providers
    if providers is None or not providers.embeddings_configured or providers.embedder() is None:
        return None
    from memverbs.server.verbs.semantic import embed  # noqa: PLC0415 - numpy only with a provider

    try:
        space_id, rows = embed(ctx, [query], create_space=False)
    except ProviderError as exc:
        import logging  # noqa: PLC0415 - a provider's failure only: a read without one never logs

        logging.getLogger("memverbs.search").warning("facts ranked by keywords only: query not embedded (%s): %s", exc.kind, exc.message)
        return None
    if space_id is None:
        return None
    matrix = _matrix(ctx.brain, space_id, int(rows.shape[1]))
    if not len(matrix.ids):
        return None
    q = rows[0]
    sims = matrix.vectors @ q
    import numpy as np  # noqa: PLC0415

    # Every source's facts are in the matrix: nominate more than the pool, the arm's filter keeps this source's.
    top = np.argsort(-sims, kind="stable")[: f.limit * 3]
    allowed = ctx.brain.facts_among(ctx.source, f, [int(matrix.ids[i]) for i in top if sims[i] >= MEANING_MATCH])
    allowed.sort(key=lambda r: -float(sims[matrix.position[r["id"]]]))
    return _Meaning(sims, matrix.position), allowed[: f.limit]


class _Matrix:
    """A space's fact vectors in one array, kept in step with the brain: new ids are read as they
    come (one indexed read), and a count that still differs (reindex filling old facts, a prune)
    reloads it whole."""

    def __init__(self, dims: int) -> None:
        import numpy as np  # noqa: PLC0415

        self.dims = dims
        self.ids = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, dims), dtype=np.float32)
        self.position: dict[int, int] = {}

    def refresh(self, brain: Brain, space_id: int) -> None:
        last = int(self.ids[-1]) if len(self.ids) else 0
        self._append(brain.fact_vectors_after(space_id, last))
        if brain.fact_vector_count(space_id) != len(self.ids):
            self.__init__(self.dims)  # type: ignore[misc] # start over
            self._append(brain.fact_vectors_after(space_id, 0))

    def _append(self, rows: list[Row]) -> None:
        if not rows:
            return
        import numpy as np  # noqa: PLC0415

        from memverbs.server.brain.base import unpack  # noqa: PLC0415

        base = len(self.ids)
        self.ids = np.concatenate([self.ids, np.array([r["fact_id"] for r in rows], dtype=np.int64)])
        self.vectors = np.vstack([self.vectors, unpack([bytes(r["vector"]) for r in rows], self.dims)])
        self.position.update((int(r["fact_id"]), base + n) for n, r in enumerate(rows))


# One matrix per brain object (a process may hold several brains, e.g. tests and benchmarks), per space.
_MATRICES: weakref.WeakKeyDictionary[Brain, dict[tuple[int, int], _Matrix]] = weakref.WeakKeyDictionary()


def _matrix(brain: Brain, space_id: int, dims: int) -> _Matrix:
    held = _MATRICES.setdefault(brain, {})
    matrix = held.get((space_id, dims))
    if matrix is None:
        matrix = held[(space_id, dims)] = _Matrix(dims)
    matrix.refresh(brain, space_id)
    return matrix
