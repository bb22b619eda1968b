"""Postgres's spelling of the pieces `dialect.Dialect` names (tsvector, row owners for row-level security, …)."""

from __future__ import annotations

import re

import psycopg

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.dialect import Dialect
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.errors import BrainError


class PostgresDialect(Dialect):
    name = "postgres"

    write_failures = (BrainError, psycopg.Error)

    # -- rows and owners ---------------------------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        # The call's person, else the person the session is (memverbs_person(): the login's, or the
        # role the session took for the caller), so row-level security sees the row as theirs.
        return f"coalesce({mark}::bigint, memverbs_person())"

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    facts_by_project = "facts"  # the planner finds facts_project itself

    # -- sync --------------------------------------------------------------------------------------

    same = "IS NOT DISTINCT FROM"
    pages_by_change = "pages"  # the planner finds pages_changed itself

    # -- pages -------------------------------------------------------------------------------------

    def text_match(self, query: SearchQuery) -> str | None:
        return tsquery(query)

    def pages_ranked(self, snippets: bool) -> str:
        # Rank normalisation 1 (÷ 1 + log length) stands in for bm25's preference for shorter pages.
        # The snippet is cut from the rows (`page_hits`): Postgres has no snippet() of its own.
        return _PAGES_RANKED

    def page_hits(self, rows: list[Row], query: SearchQuery, snippets: bool) -> list[Row]:
        if not snippets:
            return rows
        # The snippet as FTS5's snippet(…, 48) cuts it: the body window with the most query terms.
        index = {"slug": 0, "title": 1, "body": 2, "chunk": 3, "rank": 4, "owner": 5}
        return [Row((r[0], r[1], r[2], snippet(r[2], query.terms), r[4], r[5]), index) for r in rows]

    def as_int(self, condition: str) -> str:
        return f"({condition})::int"

    aliases_by_name = "aliases"  # the planner finds aliases_lookup itself
    links_by_target = "links l"
    differs = "IS DISTINCT FROM"

    def text_bytes(self, expr: str) -> str:
        return f"OCTET_LENGTH({expr})"

    # -- facts -------------------------------------------------------------------------------------

    # -- browse ------------------------------------------------------------------------------------

    greatest_of = "greatest"
    position_of = "strpos"

    def among(self, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{column} = ANY(?)", [list(values)]  # one array parameter, however many values

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        # "C": the bytewise order SQLite gives text, whatever the database's collation.
        return f'{name} AS (SELECT unnest(?::text[]) COLLATE "C" AS {column})', [list(values)]

    # -- vectors -----------------------------------------------------------------------------------

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # One array parameter: the statement's text is the same for any number of values.
        return f"{column} = ANY(?)", (list(values),)


# ts_rank's weights are {D, C, B, A}: the title (A) weighs ten times the body (B), as bm25(10, 1).
RANK_WEIGHTS = [0.0, 0.0, 0.1, 1.0]
_PAGES_RANKED = (
    "SELECT p.slug, p.title, p.body, NULL AS chunk, "
    f"ts_rank('{{{','.join(map(str, RANK_WEIGHTS))}}}'::real[], p.search, q, 1) AS rank, p.owner "
    "FROM pages p, to_tsquery('simple', ?) q WHERE p.search @@ q AND p.source_id = ? AND p.deleted_at IS NULL "
    "AND (? OR p.visibility = 'world') ORDER BY rank DESC, p.id LIMIT ?"
)


# -- full-text syntax: a `SearchQuery` as a tsquery, the only place that syntax is spelled ----------
#
# Terms are quoted lexemes of the 'simple' configuration (lowercased, unstemmed, as FTS5's
# unicode61 tokenizer treats them). A term the parser splits (`foo_bar`) becomes a phrase of its
# parts, which is what FTS5 matches too.


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


POSTGRES = PostgresDialect()
