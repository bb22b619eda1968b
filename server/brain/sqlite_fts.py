"""A `SearchQuery` written as an FTS5 MATCH expression: the only place that syntax is spelled."""

from __future__ import annotations

from memverbs.server.brain.base import SearchQuery


def _quoted(term: str) -> str:
    # A quoted FTS5 string is taken literally; a double quote inside is written twice.
    return '"' + term.replace('"', '""') + '"'


def _term(query: SearchQuery, i: int) -> str:
    prefix = query.prefix(i)
    term = _quoted(query.terms[i])
    return f"({term} OR {_quoted(prefix)}*)" if prefix else term


def fts5_match(query: SearchQuery) -> str:
    if query.mode == "title_phrase":
        return "title : " + _quoted(" ".join(query.terms))
    quoted = [_term(query, i) for i in range(len(query.terms))]
    if query.mode == "any":
        return " OR ".join(quoted)
    return " AND ".join(quoted)
