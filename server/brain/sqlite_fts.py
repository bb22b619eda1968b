"""A `SearchQuery` written as an FTS5 MATCH expression: the only place that syntax is spelled."""

from __future__ import annotations

from memverbs.server.brain.base import SearchQuery


def _quoted(term: str) -> str:
    # A quoted FTS5 string is taken literally; a double quote inside is written twice.
    return '"' + term.replace('"', '""') + '"'


def fts5_match(query: SearchQuery) -> str:
    quoted = [_quoted(t) for t in query.terms]
    if query.mode == "title_phrase":
        return "title : " + _quoted(" ".join(query.terms))
    if query.mode == "any":
        return " OR ".join(quoted)
    return " ".join(quoted)
