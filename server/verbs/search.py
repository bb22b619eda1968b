"""Search over pages: keyword-only without a provider, hybrid with one; evidence and create_safety.

Without an embedding provider (or when the query cannot be embedded) this is
the keyword path: aliases equal to the query, then keyword search with all terms, then
any term to fill up, and `search_degraded` says so. With a provider, four arms
run: aliases, the query as a phrase in the title, keywords, and vector similarity
of the query with every page chunk. Keywords and vectors are fused by their scores
as facts are (fact_search.fuse): each page's share of the best keyword score and of
the best cosine, averaged, with the exact cosine of every candidate; a title-phrase
hit adds TITLE_BOOST, an alias leads. Reciprocal rank fusion threw away how far apart
pages are: over a handful of pages that all resemble the question (the sessions of
one conversation) it ranked by the sum of the two arms' places, so the vector arm's
near-ties pushed out pages the keyword arm alone had put first. Each result says why it matched (PROTOCOL.md §4.4), first
matching rule wins: alias_hit, exact_title_match (the query is the title, up
to case, spacing and final punctuation), high_vector_match (query-to-chunk
cosine ≥ search.evidence_cosine_floor), keyword_exact (found by a lexical arm
and containing ≥ 60 % of the query's terms), else weak_semantic. Without a
provider nothing is semantic: a keyword hit below the 60 % floor is still
keyword_exact, with create_safety unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator
from typing import TYPE_CHECKING, Literal, overload

from memverbs.server.brain.base import Brain, Row, SearchQuery
from memverbs.server.context import VerbContext
from memverbs.server.errors import ProviderError
from memverbs.server.names import collapse, normalize_alias, restatement_key
from memverbs.server.pages.markdown import clip, fenced_body, frontmatter_block
from memverbs.server.terms import spaceless, stem
from memverbs.server.verbs.page_text import Kept, holds, holds_stem, inside, page_text

if TYPE_CHECKING:
    from memverbs.server.verbs.semantic import VectorArm


NO_PROVIDER = "keyword_only_no_embedding_provider"
EMBEDDING_FAILED = "keyword_only_embedding_failed"
INDEX_EMPTY = "keyword_only_vector_index_empty"
TITLE_BOOST = 0.5  # the query's words as a phrase in a page's title: ahead of body matches, behind an alias
ALIAS_BOOST = 1.0  # an alias names the page: it leads
# Function words match nearly every page; in the hybrid path they are left to the vector arm.
STOP_WORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "have", "has", "had", "it", "its", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "each", "some", "no", "not", "only", "so", "than", "too", "very", "can", "will", "just", "should", "would", "could", "may", "might", "must", "we", "us", "you", "your", "he", "him", "his", "she", "her", "they", "them", "their", "i", "me", "my", "our"]
)
KEYWORD_EXACT_FLOOR = 0.6
STEM_PREFIX_MIN = 4  # a shorter stem begins too many unrelated words ("art", "pet")
_TERM = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 16
CREATE_SAFETY = {
    "alias_hit": "exists",
    "exact_title_match": "exists",
    "high_vector_match": "exists",
    "keyword_exact": "probable",
    "weak_semantic": "unknown",
}


def terms(query: str) -> list[str]:
    seen: list[str] = []
    for t in _TERM.findall(query.lower()):
        if t not in seen:
            seen.append(t)
    return seen[:_MAX_TERMS]


def keyword_search(ctx: VerbContext, query: str, limit: int, *, allow_private: bool) -> list[dict]:
    """Results best first: {slug, title, chunk, evidence, create_safety, provenance}."""
    brain, source, mine = ctx.brain, ctx.source, ctx.private_rows_of
    words = terms(query)
    norm = normalize_alias(query)
    rows: dict[str, dict] = {}

    alias_slugs = brain.alias_slugs(source, norm) if norm else []
    for slug, page in brain.pages_by_slugs(source, alias_slugs, allow_private=allow_private).items():
        rows[slug] = _readable(page, words, mine(page), matched=False) | {"slug": slug}

    if words:
        for query_ in _keyword_queries(words):
            if len(rows) >= limit:
                break
            # Hits are read lazily: a page already found, or any past the limit, is never re-read.
            hits = lexical_hits(brain, source, query_, words, limit=limit, allow_private=allow_private,
                                private_rows=mine, skip=rows, snippets=ctx.caller.reads_private,
                                rows_of=ctx.rows_reader())
            for r in hits:
                rows[r["slug"]] = r
                if len(rows) >= limit:
                    break

    results = list(rows.values())[:limit]
    aliased = set(alias_slugs) | brain.aliased_slugs(source, [r["slug"] for r in results], norm)
    phrase = collapse(query).lower()
    out = []
    for r in results:
        evidence = _evidence(r, words, phrase, r["slug"] in aliased)
        safety = CREATE_SAFETY[evidence]
        if evidence == "weak_semantic":
            # No provider, so nothing here is semantic: it is a keyword hit on too few of the query's terms.
            evidence, safety = "keyword_exact", "unknown"
        out.append(
            {
                "slug": r["slug"],
                "title": r["title"],
                "chunk": r["chunk"] if r["chunk"] is not None else _lead(r["body"]),
                "evidence": evidence,
                "create_safety": safety,
                "provenance": r["slug"],
            }
        )
    return out


def stem_prefix(word: str) -> str:
    """What a word's inflections begin with: its Snowball stem ("turtles", "turtle" → "turtl"), or "" when
    that is shorter than STEM_PREFIX_MIN letters or the word is not plain ASCII letters."""
    stemmed = stem(word)
    return stemmed if len(stemmed) >= STEM_PREFIX_MIN and stemmed.isascii() and stemmed.isalpha() else ""


def _keyword_queries(words: list[str]) -> list[SearchQuery]:
    """Every term first, then any term to fill up (one term: just it). Both leave function words out
    when the query has others: "what" or "did" alone matches nearly every page, so ranking on them
    costs a scan of the index and adds only noise, and requiring them would put a page that happens
    to hold "what" and "did" and one word of the question before the page that holds all its others.

    The fill (and a one-term query) also finds a term as a word beginning with its stem: the pages'
    index holds words as written, and a question rarely uses the page's form of a word ("turtles"
    for "turtle", "painted" for "painting"). What the index matched by that prefix counts, where a
    hit is checked (an untrusted caller's world view), only for a word with the same stem. The
    every-term query stays on the exact words: asking it by stems too found no more on the LoCoMo
    questions and costs a prefix scan per term."""
    content = [w for w in words if w not in STOP_WORDS] or words
    prefixes = [stem_prefix(w) for w in content]
    if len(content) == 1:
        return [SearchQuery.of(content, "all", prefixes)]
    return [SearchQuery.of(content, "all"), SearchQuery.of(content, "any", prefixes)]


def lexical_hits(
    brain: Brain, source: str, query: SearchQuery, words: list[str], *, limit: int, allow_private: bool,
    private_rows: Callable[[Row], bool], skip: Container[str] = (), snippets: bool = True, rows_of: int | None = None,
) -> Iterator[dict]:
    """Keyword hits as rows {slug, title, body, chunk, rank} the caller may see (`rank`: the index's score).

    The index ranks and matches each page as if the private rows the caller may not read did not
    exist (`rows_of`: brain/page_search.py). The text it matched can still be text the world view
    leaves out (the takes fence), so
    unless the caller may read those rows (`private_rows(row)`: the page's own writer, through a
    trusted client or a read:private token, whatever pages it may see) a hit counts only if the query matches the world-safe text as the
    index matched it (every term for an "all" query, one for "any"), and its body and
    chunk come from that text: the private rows never surface, not even as the reason
    a page matched. Rows come one by one as they are read; hits whose slug is in `skip`
    (looked up as each comes) are left out unread.
    """
    # The index's snippet is read only by a caller who may see private rows; the others get one cut from the world view.
    for r in brain.keyword_search(source, query, limit=limit, allow_private=allow_private, snippets=snippets,
                                  rows_of=rows_of):
        if r["slug"] in skip:
            continue
        row = _readable(r, list(query.terms), private_rows(r), matched=True, every=query.mode == "all",
                        prefixes=[query.prefix(i) for i in range(len(query.terms))])
        if row is not None:
            yield row | {"rank": r["rank"]}  # the index's score, for hybrid fusion


@overload
def _readable(r: Row, words: list[str], private_rows: bool, *, matched: Literal[False], every: bool = False,
              prefixes: list[str] | None = None) -> dict: ...
@overload
def _readable(r: Row, words: list[str], private_rows: bool, *, matched: bool, every: bool = False,
              prefixes: list[str] | None = None) -> dict | None: ...
def _readable(r: Row, words: list[str], private_rows: bool, *, matched: bool, every: bool = False,
              prefixes: list[str] | None = None) -> dict | None:
    """The page as this caller may read it; None when it `matched` only through private text
    (with `every`, when a single term is missing from the world-safe text). A term with a stem prefix
    (`prefixes`, one per word) is held by a word of the same stem too."""
    if private_rows:
        return {"slug": r["slug"], "title": r["title"], "body": r["body"], "chunk": r["chunk"] if matched else None}
    body = _world_body(r["body"] or "")
    if matched:
        title, text = r["title"], page_text(body)
        stems = prefixes or [""] * len(words)
        if not (all if every else any)(
            holds(title, text, w) or (spaceless(w) and inside(title, text, w)) or (bool(p) and holds_stem(title, text, p))
            for w, p in zip(words, stems, strict=True)
        ):
            return None  # it matched on private text
    return {"slug": r["slug"], "title": r["title"], "body": body, "chunk": _snippet(body, words) if matched else None}


def _cut_world_body(body: str) -> str:
    """fenced_body(body, include_private=False), without walking the lines of a page that has no fence at all
    (most pages: a session log, a note): every fence marker is an HTML comment, so without `<!--` nothing is cut."""
    if "<!--" in body:
        return fenced_body(body, include_private=False)
    return "\n".join(body[len(frontmatter_block(body)) :].splitlines())


_world_body = Kept(_cut_world_body)  # the same pages come back query after query


def _snippet(text: str, words: list[str], limit: int = 300) -> str | None:
    """The prose line of `text` holding the most query terms (the world-safe stand-in for the keyword index's snippet):
    a line's hits are the distinct terms that are words of it, plus the spaceless-script terms inside it."""
    best = page_text(text).best_line(words) if words else None
    return clip(collapse(best), limit) if best else _lead(text, limit)


def _evidence(
    row: dict, words: list[str], phrase: str, alias_hit: bool, *, cosine: float | None = None, floor: float = 1.1,
    keyword_hit: bool = True,
) -> str:
    if alias_hit:
        return "alias_hit"
    if phrase and restatement_key(row["title"] or "") == restatement_key(phrase):
        return "exact_title_match"  # the title itself, up to case, spacing and final punctuation
    if cosine is not None and cosine >= floor:
        return "high_vector_match"
    if words and keyword_hit:
        title, text = row["title"], page_text(row["body"] or "")
        if sum(holds(title, text, w) for w in words) / len(words) >= KEYWORD_EXACT_FLOOR:
            return "keyword_exact"
    return "weak_semantic"


def _lead(body: str | None, limit: int = 400) -> str | None:
    if not body:
        return None
    text = collapse(body)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def search_pages(
    ctx: VerbContext, query: str, limit: int, *, allow_private: bool, lexical: str | None = None
) -> tuple[list[dict], str | None]:
    """(results best first, search_degraded); search_degraded is None when the hybrid path ran.

    `lexical` replaces the query for the alias, title and keyword arms (synthesize passes its
    question without stop words there, and whole to the vector arm).
    """
    words_query = lexical if lexical is not None else query
    providers = ctx.providers
    if providers is None or not providers.embeddings_configured or providers.embedder() is None:
        return keyword_search(ctx, words_query, limit, allow_private=allow_private), NO_PROVIDER
    from memverbs.server.verbs.semantic import vector_arm  # noqa: PLC0415 - numpy only with a provider

    try:
        arm = vector_arm(ctx, query, allow_private=allow_private)
    except ProviderError as exc:
        import logging  # noqa: PLC0415 - a provider's failure only: the hooks' path reads cards, never logs

        logging.getLogger("memverbs.search").warning("search fell back to keywords: query not embedded (%s): %s", exc.kind, exc.message)
        return keyword_search(ctx, words_query, limit, allow_private=allow_private), EMBEDDING_FAILED
    if arm is None:
        return keyword_search(ctx, words_query, limit, allow_private=allow_private), INDEX_EMPTY
    return hybrid_search(ctx, words_query, limit, arm, allow_private=allow_private), None


def score_shares(ranks: list[float | None]) -> list[float]:
    """Each hit's share of the best hit's index score, for hits given best first. The backends' scores
    differ in sign (FTS5 bm25 is negative, lower is better; Postgres ts_rank and the substring search's
    title count are positive), but within one answer they share it, so the ratio to the first is a
    share in [0, 1] either way. With no score at the top (a substring search with no title match),
    every hit counts in full."""
    best = float(ranks[0] or 0.0) if ranks else 0.0
    if best == 0.0:
        return [1.0] * len(ranks)
    return [max(0.0, min(1.0, float(r or 0.0) / best)) for r in ranks]


def content_terms(query: str) -> list[str]:
    words = terms(query)
    return [w for w in words if w not in STOP_WORDS] or words


def hybrid_search(ctx: VerbContext, query: str, limit: int, arm: VectorArm, *, allow_private: bool) -> list[dict]:
    brain, source, mine = ctx.brain, ctx.source, ctx.private_rows_of
    words = content_terms(query)
    norm = normalize_alias(query)
    phrase = collapse(query).lower()
    pool = max(limit, 30)
    pages: dict[str, dict] = {}
    ranks: dict[str, dict[str, int]] = {}

    arm_sizes: dict[str, int] = {}

    def seen(arm_name: str, slug: str, row: dict) -> None:
        """Record `slug` at the next rank of `arm_name` (first sighting per arm counts)."""
        pages.setdefault(slug, {"slug": slug, "title": row["title"], "body": row["body"], "chunk": None})
        held = ranks.setdefault(slug, {})
        if arm_name not in held:
            arm_sizes[arm_name] = held[arm_name] = arm_sizes.get(arm_name, 0) + 1

    alias_slugs = brain.alias_slugs(source, norm) if norm else []
    for slug, row in brain.pages_by_slugs(source, alias_slugs, allow_private=allow_private).items():
        seen("alias", slug, _readable(row, words, mine(row), matched=False) | {"slug": slug})
    snippets: dict[str, str] = {}
    keyword: dict[str, float] = {}
    if words:
        title_phrase = SearchQuery.of(words, "title_phrase")
        for r in brain.keyword_search(source, title_phrase, limit=pool, allow_private=allow_private, snippets=False,
                                      rows_of=ctx.rows_reader()):
            seen("title", r["slug"], _readable(r, words, mine(r), matched=False) | {"slug": r["slug"]})
        for query_ in _keyword_queries(words):
            hits = list(lexical_hits(brain, source, query_, words, limit=pool, allow_private=allow_private,
                                     private_rows=mine, snippets=ctx.caller.reads_private, rows_of=ctx.rows_reader()))
            for r, share in zip(hits, score_shares([r["rank"] for r in hits]), strict=True):
                seen("keyword", r["slug"], r)
                snippets.setdefault(r["slug"], r["chunk"])
                keyword[r["slug"]] = max(keyword.get(r["slug"], 0.0), share)
    vector_best: dict[str, tuple[float, str]] = {}
    for hit in arm.pages(pool):
        seen("vector", hit["slug"], _readable(hit, words, mine(hit), matched=False))  # its chunk is world-safe already
        vector_best[hit["slug"]] = (hit["cosine"], hit["chunk"])

    aliased = set(alias_slugs) | brain.aliased_slugs(source, list(pages), norm)

    # Every candidate's exact cosine (not only the vector arm's hits), so its place never depends on which arm found it.
    vector_best.update(arm.cosines([slug for slug in pages if slug not in vector_best]))
    from memverbs.server.verbs.fact_search import fuse  # noqa: PLC0415 - one fusion rule for facts and pages

    scores = fuse(keyword, {slug: c for slug, (c, _) in vector_best.items() if slug in pages and c > 0})

    def fused(slug: str) -> float:
        boost = (TITLE_BOOST if "title" in ranks[slug] else 0.0) + (ALIAS_BOOST if slug in aliased else 0.0)
        return scores.get(slug, 0.0) + boost

    ordered = sorted(pages, key=lambda slug: (-fused(slug), slug))[:limit]
    assert ctx.providers is not None, "a vector arm exists only with an embedding provider"
    floor = ctx.providers.cosine_floor
    out = []
    for slug in ordered:
        row = pages[slug]
        cosine, best_chunk = vector_best.get(slug, (None, None))
        lexical = bool({"title", "keyword"} & set(ranks[slug]))
        evidence = _evidence(row, words, phrase, slug in aliased, cosine=cosine, floor=floor, keyword_hit=lexical)
        out.append(
            {
                "slug": slug,
                "title": row["title"],
                # The matched chunk: the best-scoring one, else the keyword snippet, else the page's lead.
                "chunk": best_chunk or snippets.get(slug) or _lead(row["body"]),
                "evidence": evidence,
                "create_safety": CREATE_SAFETY[evidence],
                "provenance": slug,
            }
        )
    return out
