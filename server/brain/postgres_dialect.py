"""Postgres's spelling of the pieces `dialect.Dialect` names (tsvector, row owners for row-level security, …)."""

from __future__ import annotations

from typing import Any

import psycopg

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.dialect import Dialect
from memverbs.server.brain.facts_store import FACT_COLS_F, FACT_VALUES
from memverbs.server.brain.postgres_search import tsquery
from memverbs.server.brain.store import first
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
        return int(first(cursor)[0])  # insert_fact answers it (RETURNING id)

    def fact_params(self, values: tuple[object, ...]) -> tuple[object, ...] | dict[str, object]:
        return dict(zip(FACT_VALUES, values, strict=True))  # by name: the statements read some twice

    def ranked_terms(self, query: SearchQuery) -> tuple[object, ...] | None:
        q = tsquery(SearchQuery.of(query.terms, "any"))
        return None if q is None else (list(query.terms), q)

    def facts_ranked(self, where: str) -> str:
        # Postgres has no BM25, so it is computed here as FTS5 computes it (k1 1.2, b 0.75, idf
        # ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, N and the mean length over every fact), from
        # the stored terms: both backends rank with the same formula over the same terms.
        return (
            "WITH q AS (SELECT t, (SELECT count(*) FROM facts WHERE search @@ quote_literal(t)::tsquery)::float8 AS hits "
            "FROM unnest(?::text[]) t), "
            "totals AS (SELECT count(*)::float8 AS n, greatest(avg(search_len), 1)::float8 AS avgdl FROM facts), "
            f"hit AS (SELECT id, string_to_array(search_terms, ' ') AS w, search_len FROM facts WHERE search @@ ?::tsquery AND {where}), "
            "scored AS (SELECT hit.id, sum(greatest(ln((totals.n - q.hits + 0.5) / (q.hits + 0.5)), 1e-6) * tf.n * 2.2 "
            "/ (tf.n + 1.2 * (0.25 + 0.75 * hit.search_len / totals.avgdl))) AS score "
            "FROM hit CROSS JOIN totals CROSS JOIN q "
            "CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM unnest(hit.w) x WHERE x = q.t) tf WHERE tf.n > 0 GROUP BY hit.id) "
            f"SELECT {FACT_COLS_F}, scored.score FROM scored JOIN facts f ON f.id = scored.id ORDER BY scored.score DESC, f.id DESC LIMIT ?"
        )

    def facts_ranked_in_index(self, where: str) -> str | None:
        return None  # a GIN index finds matches, it does not rank them

    def facts_matching(
        self, query: SearchQuery, where: str, args: list[object], limit: int
    ) -> tuple[str, list[object]] | None:
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

    def among(self, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{column} = ANY(?)", [list(values)]  # one array parameter, however many values

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        # "C": the bytewise order SQLite gives text, whatever the database's collation.
        return f'{name} AS (SELECT unnest(?::text[]) COLLATE "C" AS {column})', [list(values)]

    # -- vectors -----------------------------------------------------------------------------------

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # One array parameter: the statement's text is the same for any number of values.
        return f"{column} = ANY(?)", (list(values),)


POSTGRES = PostgresDialect()
