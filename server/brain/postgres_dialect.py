"""Postgres's spelling of the pieces `dialect.Dialect` names (tsvector, row owners for row-level security, …)."""

from __future__ import annotations

import re
from typing import Any

import psycopg

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.dialect import Dialect
from memverbs.server.brain.facts_store import FACT_COLS_F, FACT_VALUES
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.errors import BrainError


class PostgresDialect(Dialect):
    name = "postgres"

    write_failures = (BrainError, psycopg.Error)

    # -- rows, owners and lists (every store) ------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        # The call's person, else the person the session is (memverbs_person(): the login's, or the
        # role the session took for the caller), so row-level security sees the row as theirs.
        return f"coalesce({mark}::bigint, memverbs_person())"

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # One array parameter: the statement's text is the same for any number of values.
        return f"{column} = ANY(?)", (list(values),)

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    facts_by_project = "facts"  # the planner finds facts_project itself
    statements_by_project = "facts"  # and facts_project_statements

    # -- sync --------------------------------------------------------------------------------------

    same = "IS NOT DISTINCT FROM"
    pages_by_change = "pages"  # the planner finds pages_changed itself

    page_hidden = "SELECT memverbs_page_hidden(?, ?)"  # row-level security hides another person's private page

    # One statement whose text never changes (arrays, the suffixes unnested beside a LIMIT 50 each), so
    # psycopg prepares it once per connection: planned per call, a statement of one part per suffix cost
    # more than all its reads (its parts, and the row policies they expand to, are planned each time).
    def link_candidates(self, source: str, slugs: list[str], ranges: list[tuple[str, str, str]], title_keys: list[str],
                        alias_norms: list[str], allow_private: bool) -> tuple[str, tuple]:
        keys, los, his = ([r[i] for r in ranges] for i in range(3))
        return _LINK_CANDIDATES, (source, slugs, allow_private, source, title_keys, allow_private, source, alias_norms,
                                  allow_private, keys, los, his, source, allow_private)

    # Another person's folder is not a row this session reads: its claims are, through the functions
    # row-level security allows them (postgres_policies.SYNC_CLAIMS).
    def file_claims(self, source: str, slug: str, file_hash: str) -> str:
        return f"memverbs_sync_claims({source}, {slug}, {file_hash})"

    def prefix_claims(self, source: str) -> str:
        return f"memverbs_sync_prefixes({source})"

    # -- pages -------------------------------------------------------------------------------------

    def text_match(self, query: SearchQuery) -> str | None:
        return tsquery(query)

    def pages_ranked(self, snippets: bool, rows_of: int | None, allow_private: bool) -> str:
        # Rank normalisation 1 (÷ 1 + log length) stands in for bm25's preference for shorter pages.
        # The snippet is cut from the rows (`page_hits`): Postgres has no snippet() of its own.
        # ts_rank reads a page's own vector only, so each page is ranked on the vector it would have
        # without the private rows this caller may not read (postgres_schema.WORLD_SEARCH), matched
        # on it too; the person's own pages keep theirs whole.
        world = "memverbs_world_search(p.title, p.body, p.search)"
        vector = world if rows_of is None else f"CASE WHEN p.owner = {int(rows_of)} THEN p.search ELSE {world} END"
        return _PAGES_RANKED.format(vector=vector)

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

    # A fact's recording time (delta's fact cursor compares them): the database server's clock, one
    # clock for every host, unless the caller's is ahead. It is read by the INSERT itself, inside the
    # write transaction after the write lock is taken, so recording times follow commit order and the
    # cursor never skips a fact in flight. MATERIALIZED: read once, so valid_from = created_at exactly.
    _fact_stamp = (
        "stamp AS MATERIALIZED (SELECT GREATEST(%(now)s::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS at)"
    )
    # Typed casts where a NULL or a number would otherwise reach INSERT … SELECT as `unknown` or
    # `text`; the owner as `owner()` writes it.
    _fact_insert = (
        "INSERT INTO facts (source_id, fact, fact_norm, kind, entity_slug, visibility, notability, provenance, "
        "source_session, context, confidence, valid_from, valid_until, created_at, project, search_terms, owner) "
        "SELECT %(source)s, %(fact)s, %(fact_norm)s, %(kind)s, %(entity_slug)s, %(visibility)s, %(notability)s, "
        "%(provenance)s, %(source_session)s, %(context)s, %(confidence)s::double precision, "
        "COALESCE(%(valid_from)s::bigint, stamp.at), "
        "%(valid_until)s::bigint, stamp.at, %(project)s::text, %(search_terms)s, "
        "coalesce(%(owner)s::bigint, memverbs_person()) FROM stamp"
    )
    insert_fact = f"WITH {_fact_stamp} {_fact_insert} RETURNING id"
    # The page `require_page` asks for (facts_store documents it), as a one-row CTE.
    _fact_page = (
        "page AS MATERIALIZED (SELECT NOT %(require_page)s OR EXISTS (SELECT 1 FROM pages WHERE source_id = %(source)s "
        "AND slug = %(entity_slug)s AND deleted_at IS NULL AND (%(allow_private)s OR visibility = 'world')) AS ok)"
    )
    # remember without a vector to compare, as one statement: the page check, the exact-restatement
    # check (facts_store documents the rule) and the insert they allow, so the checks and the
    # write they decide share one snapshot taken under the write lock. It answers one row: the
    # duplicate it found, the new fact, or that the required page is not there.
    remember_fact = (
        f"WITH {_fact_page}, dup AS MATERIALIZED ("
        "SELECT id, valid_until FROM facts WHERE %(dedup)s AND (SELECT ok FROM page) AND source_id = %(source)s "
        "AND entity_slug = %(entity_slug)s AND fact_norm = %(fact_norm)s AND visibility = %(visibility)s AND expired_at IS NULL "
        "AND (valid_until IS NULL OR valid_until > %(now)s::bigint) ORDER BY id LIMIT 1), "
        f"{_fact_stamp}, "
        f"ins AS ({_fact_insert} WHERE (SELECT ok FROM page) AND NOT EXISTS (SELECT 1 FROM dup) RETURNING id, valid_until) "
        "SELECT 'duplicate' AS status, id, valid_until FROM dup "
        "UNION ALL SELECT 'inserted', id, valid_until FROM ins "
        "UNION ALL SELECT 'no_page', 0, NULL FROM page WHERE NOT ok"
    )
    facts_by_entity = "facts"

    def recorded_at(self, now: int) -> int:
        return now  # the floor: the statement stamps the server's clock (`_fact_stamp`)

    def inserted_fact_id(self, cursor: Any) -> int:
        return int(cursor.fetchone()[0])  # insert_fact answers it (RETURNING id)

    def fact_params(self, values: tuple[object, ...]) -> tuple[object, ...] | dict[str, object]:
        return dict(zip(FACT_VALUES, values, strict=True))  # by name: the statements read some twice

    def ranked_terms(self, query: SearchQuery) -> tuple[object, ...] | None:
        q = tsquery(SearchQuery.of(query.terms, "any"))
        return None if q is None else (*query.terms, q)  # each term, then the query matching any of them

    def facts_ranked(self, where: str, terms: tuple[object, ...], world: bool) -> str:
        # Postgres has no BM25, so it is computed here as FTS5 computes it (k1 1.2, b 0.75, idf
        # ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, N and the mean length over every fact the
        # session sees, each term's share added in the query's order, a term a fact lacks adding
        # 0.0), from the stored terms: both backends rank with the same formula over the same terms.
        #
        # One read of the facts matching any term (`hit`, through the GIN index) gives each term's
        # frequency in each (`m`), so each term's document frequency, and the matches the arm
        # allows (`ok`): nothing is counted per match;
        # every corpus figure is MATERIALIZED, computed once; N and the terms in all are read from
        # fact_totals (postgres_schema.FACT_TOTALS), the rows of the classes the session sees. The
        # statement is written for the query's number of terms, so a match's score is one float8 expression (a term's frequency
        # read in C by array_positions; 0.75 × a length is exact in float8 as in numeric), not a
        # subquery per match; only the best `limit` rows are read whole.
        #
        # A caller reading world facts only (`world`) ranks over the world facts alone: the document
        # frequencies count world matches, N and the mean length the world class of fact_totals, so
        # no private fact changes a score it gets.
        k = len(terms) - 1
        counted = " AND m.world" if world else ""
        classes = "class = 0" if world else (
            "class = 0 OR class = (SELECT memverbs_person()) OR NOT row_security_active('facts')")
        shares = " + ".join(
            f"w.idf{j} * m.tf{j} * 2.2 / (m.tf{j} + 1.2 * (0.25 + 0.75 * m.len / w.avgdl))" for j in range(k)
        )
        return (
            f"WITH q AS MATERIALIZED (SELECT {', '.join(f'?::text AS t{j}' for j in range(k))}), "
            # Inlined (not MATERIALIZED): the planner sees the query itself, so GIN or a scan by how many it matches.
            "matched AS (SELECT * FROM facts WHERE search @@ ?::tsquery), "
            "hit AS MATERIALIZED (SELECT id, string_to_array(search_terms, ' ') AS terms, search_len::float8 AS len, "
            f"({where}) AS ok, visibility = 'world' AS world FROM matched), "
            "m AS MATERIALIZED (SELECT hit.id, hit.len, hit.ok, hit.world, "
            f"{', '.join(f'cardinality(array_positions(hit.terms, q.t{j}))::float8 AS tf{j}' for j in range(k))} FROM hit CROSS JOIN q), "
            f"df AS MATERIALIZED (SELECT {', '.join(f'(count(*) FILTER (WHERE m.tf{j} > 0{counted}))::float8 AS h{j}' for j in range(k))} FROM m), "
            # avg(search_len) as Postgres computes it: the numeric sum over the numeric count.
            "totals AS MATERIALIZED (SELECT coalesce(sum(facts), 0)::float8 AS n, "
            f"greatest(sum(terms) / nullif(sum(facts), 0), 1)::float8 AS avgdl FROM fact_totals WHERE {classes}), "
            f"w AS MATERIALIZED (SELECT {', '.join(f'greatest(ln((totals.n - df.h{j} + 0.5) / (df.h{j} + 0.5)), 1e-6) AS idf{j}' for j in range(k))}, "
            "totals.avgdl FROM df CROSS JOIN totals), "
            f"best AS MATERIALIZED (SELECT m.id, 0::float8 + {shares} AS score FROM m CROSS JOIN w WHERE m.ok "
            "ORDER BY score DESC, m.id DESC LIMIT ?) "
            f"SELECT {FACT_COLS_F}, best.score FROM best JOIN facts f ON f.id = best.id ORDER BY best.score DESC, f.id DESC"
        )

    def facts_ranked_in_index(self, where: str, world: bool) -> str | None:
        return None  # a GIN index finds matches, it does not rank them

    def facts_matching(
        self, query: SearchQuery, where: str, args: list[object], limit: int, world: bool
    ) -> tuple[str, list[object]] | None:
        # ts_rank reads each fact's own vector (no corpus statistics): `world` changes nothing here.
        q = tsquery(query)
        if q is None:
            return None
        return (
            f"SELECT {FACT_COLS_F} FROM facts f WHERE f.search @@ ?::tsquery AND {where} "
            "ORDER BY ts_rank(f.search, ?::tsquery) DESC, f.id LIMIT ?",
            [q, *args, q, limit],
        )

    # -- browse ------------------------------------------------------------------------------------

    greatest_of = "greatest"
    position_of = "strpos"

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        # "C": the bytewise order SQLite gives text, whatever the database's collation.
        return f'{name} AS (SELECT unnest(?::text[]) COLLATE "C" AS {column})', [list(values)]

    # -- vectors -----------------------------------------------------------------------------------


# ts_rank's weights are {D, C, B, A}: the title (A) weighs ten times the body (B), as bm25(10, 1).
RANK_WEIGHTS = [0.0, 0.0, 0.1, 1.0]
_PAGES_RANKED = (
    "SELECT p.slug, p.title, p.body, NULL AS chunk, "
    f"ts_rank('{{{{{','.join(map(str, RANK_WEIGHTS))}}}}}'::real[], w.v, q, 1) AS rank, p.owner "
    "FROM pages p CROSS JOIN to_tsquery('simple', ?) q CROSS JOIN LATERAL (SELECT {vector} AS v) w "
    "WHERE p.search @@ q AND w.v @@ q AND p.source_id = ? AND p.deleted_at IS NULL "
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


_LIVE = "deleted_at IS NULL AND (%s OR visibility = 'world')"
_LINK_CANDIDATES = (
    f"SELECT 'slug' AS kind, slug AS key, slug, visibility FROM pages WHERE source_id = %s AND slug = ANY(%s) AND {_LIVE} "
    f"UNION ALL SELECT 'title', title_key, slug, visibility FROM pages WHERE source_id = %s AND title_key = ANY(%s) AND {_LIVE} "
    "UNION ALL SELECT DISTINCT 'alias', a.alias_norm, p.slug, p.visibility FROM aliases a JOIN pages p "
    "ON p.source_id = a.source_id AND p.slug = a.slug WHERE a.source_id = %s AND a.alias_norm = ANY(%s) "
    "AND p.deleted_at IS NULL AND (%s OR p.visibility = 'world') "
    "UNION ALL SELECT 'suffix', r.key, s.slug, s.visibility FROM unnest(%s::text[], %s::text[], %s::text[]) AS r(key, lo, hi) "
    "CROSS JOIN LATERAL (SELECT slug, visibility FROM pages WHERE source_id = %s AND slug_rev >= r.lo AND slug_rev < r.hi "
    f"AND {_LIVE} LIMIT 50) s"
)
