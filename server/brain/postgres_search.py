"""A `SearchQuery` written as a Postgres tsquery: the only place that syntax is spelled.

Terms are quoted lexemes of the 'simple' configuration (lowercased, unstemmed,
as FTS5's unicode61 tokenizer treats them). A term the parser splits (`foo_bar`)
becomes a phrase of its parts, which is what FTS5 matches too.
"""

from __future__ import annotations

from memverbs.server.brain.base import SearchQuery

# ts_rank's weights are {D, C, B, A}: the title (A) weighs ten times the body (B), as bm25(10, 1).
RANK_WEIGHTS = [0.0, 0.0, 0.1, 1.0]


def _lexeme(term: str, weight: str = "") -> str:
    # A quoted lexeme is taken literally; a quote inside is doubled, a backslash escaped.
    quoted = "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
    return quoted + (":" + weight if weight else "")


def tsquery(query: SearchQuery) -> str | None:
    """The to_tsquery('simple', …) text for this query, or None when it has no terms."""
    terms = [t for t in query.terms if t.strip()]
    if not terms:
        return None
    if query.mode == "title_phrase":
        return " <-> ".join(_lexeme(t, "A") for t in terms)
    joiner = " | " if query.mode == "any" else " & "
    return joiner.join(_lexeme(t) for t in terms)
