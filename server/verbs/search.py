"""Keyword search over pages, with the evidence and create_safety labels.

The arms: aliases equal to the query, then FTS5 (all terms, then any term to
fill up). Each result says why it matched (PROTOCOL.md §4.4), derived here
from signals a keyword path has: an alias hit, the query as a phrase in the
title, and the share of query terms the page contains (≥ 0.6 counts as
keyword_exact). The vector arm joins in with an embedding provider.
"""

from __future__ import annotations

import re

from memverbs.server.context import VerbContext
from memverbs.server.names import collapse, normalize_alias

KEYWORD_EXACT_FLOOR = 0.6
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
    brain, source = ctx.brain, ctx.source
    words = terms(query)
    norm = normalize_alias(query)
    rows: dict[str, dict] = {}

    alias_slugs = brain.alias_slugs(source, norm) if norm else []
    for slug, page in brain.pages_by_slugs(source, alias_slugs, allow_private=allow_private).items():
        rows[slug] = {"slug": slug, "title": page["title"], "body": page["body"], "chunk": None}

    if words:
        quoted = [f'"{w}"' for w in words]
        for expr in (" ".join(quoted), " OR ".join(quoted)) if len(words) > 1 else (quoted[0],):
            if len(rows) >= limit:
                break
            for r in brain.keyword_search(source, expr, limit=limit, allow_private=allow_private):
                rows.setdefault(r["slug"], {"slug": r["slug"], "title": r["title"], "body": r["body"], "chunk": r["chunk"]})

    results = list(rows.values())[:limit]
    aliased = set(alias_slugs) | brain.aliased_slugs(source, [r["slug"] for r in results], norm)
    phrase = collapse(query).lower()
    out = []
    for r in results:
        evidence = _evidence(r, words, phrase, r["slug"] in aliased)
        out.append(
            {
                "slug": r["slug"],
                "title": r["title"],
                "chunk": r["chunk"] if r["chunk"] is not None else _lead(r["body"]),
                "evidence": evidence,
                "create_safety": CREATE_SAFETY[evidence],
                "provenance": r["slug"],
            }
        )
    return out


def _evidence(row: dict, words: list[str], phrase: str, alias_hit: bool) -> str:
    if alias_hit:
        return "alias_hit"
    title = (row["title"] or "").lower()
    if phrase and phrase in title:
        return "exact_title_match"
    if words:
        haystack = set(_TERM.findall(f"{row['title'] or ''} {row['body'] or ''}".lower()))
        if sum(w in haystack for w in words) / len(words) >= KEYWORD_EXACT_FLOOR:
            return "keyword_exact"
    return "weak_semantic"


def _lead(body: str | None, limit: int = 400) -> str | None:
    if not body:
        return None
    text = collapse(body)
    return text if len(text) <= limit else text[: limit - 1] + "…"
