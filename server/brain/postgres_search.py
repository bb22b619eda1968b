"""A `SearchQuery` written as a Postgres tsquery: the only place that syntax is spelled.

Terms are quoted lexemes of the 'simple' configuration (lowercased, unstemmed,
as FTS5's unicode61 tokenizer treats them). A term the parser splits (`foo_bar`)
becomes a phrase of its parts, which is what FTS5 matches too.
"""

from __future__ import annotations

import re

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
    return joiner.join(_alternatives(query, i) for i, t in enumerate(query.terms) if t.strip())


def _alternatives(query: SearchQuery, i: int) -> str:
    prefix = query.prefix(i)
    term = _lexeme(query.terms[i])
    return f"({term} | {_lexeme(prefix)}:*)" if prefix else term


_TOKEN = re.compile(r"\w+", re.UNICODE)
SNIPPET_TOKENS = 48


def snippet(text: str | None, terms: tuple[str, ...] | list[str], size: int = SNIPPET_TOKENS) -> str:
    """The `size`-token window of `text` holding the most query terms, as FTS5's snippet() cuts it:
    the text between the window's first and last token, with "…" where the text goes on."""
    if not text:
        return ""
    tokens = list(_TOKEN.finditer(text))
    if len(tokens) <= size:
        return text
    wanted = set(terms)
    hits = [t.group().lower() in wanted for t in tokens]
    count = best = sum(hits[:size])
    start = 0
    for first in range(1, len(tokens) - size + 1):  # slide the window one token at a time
        count += hits[first + size - 1] - hits[first - 1]
        if count > best:
            best, start = count, first
    # Lead into the first hit by a quarter window (no hit is lost: the window only moves past non-hits).
    first_hit = next((i for i in range(start, start + size) if hits[i]), start)
    start = min(max(start, first_hit - size // 4), len(tokens) - size)
    last = start + size - 1
    head = 0 if start == 0 else tokens[start].start()
    tail = len(text) if last == len(tokens) - 1 else tokens[last].end()
    return ("…" if head else "") + text[head:tail] + ("…" if tail < len(text) else "")
