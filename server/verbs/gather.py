"""synthesize's gather step: the pages and facts a question is answered from, inside its window.

Pages come from the same search as recall (hybrid with a provider, keywords
without), asked with the question's content words on the lexical arms and the
whole question on the vector arm. The window (`since`/`until`) applies to a
page's last update and a fact's event time (`valid_from`). Facts are the ones
whose text matches the question and the ones about gathered pages; memverbs
reports them as `takes_gathered` (its facts are the reference's "takes":
attributed claims, not page text). Untrusted callers get world-visible pages
and facts only, as everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memverbs.server.brain.base import Row, SearchQuery
from memverbs.server.context import VerbContext
from memverbs.server.names import collapse
from memverbs.server.terms import query_terms
from memverbs.server.timeparse import now_ms
from memverbs.server.verbs.search import EMBEDDING_FAILED, STOP_WORDS, search_pages

PAGES_MAX = 8
FACTS_MAX = 30
EXCERPT_CHARS = 1500
_WORD = re.compile(r"\w+", re.UNICODE)
# Question words on top of the search's stop words: they say "this is a question", not what about.
QUESTION_WORDS = frozenset(["know", "tell", "say", "said", "anything", "something", "everything", "ever"])

@dataclass
class Gathered:
    pages: list[dict] = field(default_factory=list)  # {slug, title, excerpt, evidence}
    facts: list[dict] = field(default_factory=list)  # {id, fact, kind, entity_slug, valid_from, provenance}
    warnings: list[str] = field(default_factory=list)


def content_words(question: str) -> str:
    words = [w for w in _WORD.findall(question.lower()) if w not in STOP_WORDS and w not in QUESTION_WORDS]
    return " ".join(words) or question


def gather(ctx: VerbContext, question: str, since: int | None, until: int | None) -> Gathered:
    out = Gathered()
    now = now_ms()
    lexical = content_words(question)
    results, degraded = search_pages(ctx, question, PAGES_MAX * 3, allow_private=ctx.pages_private_ok, lexical=lexical)
    if degraded == EMBEDDING_FAILED:
        out.warnings.append("QUESTION_EMBED_FAILED")
    if results and (since is not None or until is not None):
        rows = ctx.brain.pages_by_slugs(ctx.source, [r["slug"] for r in results], allow_private=ctx.pages_private_ok)
        inside = [
            r
            for r in results
            if r["slug"] in rows
            and (since is None or rows[r["slug"]]["updated_at"] >= since)
            and (until is None or rows[r["slug"]]["updated_at"] <= until)
        ]
        excluded = len(results) - len(inside)
        if excluded:
            out.warnings.append(f"WINDOW_EXCLUDED_{excluded}_PAGES")
        results = inside
    for r in results[:PAGES_MAX]:
        excerpt = collapse(r["chunk"] or "")
        out.pages.append(
            {"slug": r["slug"], "title": r["title"] or r["slug"], "excerpt": excerpt[:EXCERPT_CHARS], "evidence": r["evidence"]}
        )

    world_only = not ctx.caller.reads_private
    facts: dict[int, dict] = {}
    words = query_terms(lexical)
    if words:
        for row in ctx.brain.facts_matching(
            ctx.source, SearchQuery.of(words, "any"), world_only=world_only, now=now, since=since, until=until, limit=FACTS_MAX
        ):
            facts.setdefault(row["id"], _fact(row))
    slugs = [p["slug"] for p in out.pages]
    for row in ctx.brain.entity_facts(ctx.source, slugs, world_only=world_only, now=now, limit=FACTS_MAX):
        if (since is None or row["valid_from"] >= since) and (until is None or row["valid_from"] <= until):
            facts.setdefault(row["id"], _fact(row))
    out.facts = list(facts.values())[:FACTS_MAX]
    return out


def _fact(row: Row) -> dict:
    return {
        "id": row["id"],
        "fact": row["fact"],
        "kind": row["kind"],
        "entity_slug": row["entity_slug"],
        "valid_from": row["valid_from"],
        "provenance": row["provenance"],
    }
