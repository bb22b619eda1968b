"""Facts in the Postgres brain: written once, expired with a reason, never deleted (the SQLite store's twin)."""

from __future__ import annotations

from collections.abc import Callable

from memverbs.server import people
from memverbs.server.brain.base import FactFilter, NewFact, SearchQuery
from memverbs.server.brain.pages_store import LIVE_PAGE
from memverbs.server.brain.postgres_base import OWNER_SQL, Conn, PostgresBase, first
from memverbs.server.brain.postgres_dialect import tsquery
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.brain.sqlite_facts import FACT_COLS
from memverbs.server.terms import index_text

_ACTIVE = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > %s)"
_WORLD = "(NOT %s OR visibility = 'world')"


def fact_order(arm: str) -> str:
    """The order recall's facts arm reads in (and the CLI pages through)."""
    if arm == "supersessions":
        return "COALESCE(expired_at, valid_until) DESC, id DESC"
    return "created_at DESC, id DESC" if arm == "session" else "valid_from DESC, id DESC"


# A fact's recording time (delta's fact cursor compares them): the database server's clock, one
# clock for every host, unless the caller's is ahead. It is read by the INSERT itself, inside the
# write transaction after the write lock is taken, so recording times follow commit order and the
# cursor never skips a fact in flight. MATERIALIZED: read once, so valid_from = created_at exactly.
_STAMP = "stamp AS MATERIALIZED (SELECT GREATEST(%(now)s::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS at)"
# Typed casts where a NULL or a number would otherwise reach INSERT … SELECT as `unknown` or `text`.
_INSERT = (
    "INSERT INTO facts (source_id, fact, fact_norm, kind, entity_slug, visibility, notability, provenance, "
    "source_session, context, confidence, valid_from, valid_until, created_at, project, search_terms, owner) "
    "SELECT %(source)s, %(fact)s, %(fact_norm)s, %(kind)s, %(entity_slug)s, %(visibility)s, %(notability)s, "
    "%(provenance)s, %(source_session)s, %(context)s, %(confidence)s::double precision, "
    "COALESCE(%(valid_from)s::bigint, stamp.at), "
    f"%(valid_until)s::bigint, stamp.at, %(project)s::text, %(search_terms)s, {OWNER_SQL % '%(owner)s'} FROM stamp"
)
# The page `require_page` asks for (the SQLite store documents it), as a one-row CTE.
_PAGE_CHECK = (
    "page AS MATERIALIZED (SELECT NOT %(require_page)s OR EXISTS (SELECT 1 FROM pages WHERE source_id = %(source)s "
    "AND slug = %(entity_slug)s AND deleted_at IS NULL AND (%(allow_private)s OR visibility = 'world')) AS ok)"
)
# remember without a vector to compare, as one statement: the page check, the exact-restatement
# check (the SQLite store documents the rule) and the insert they allow, so the checks and the
# write they decide share one snapshot taken under the write lock. It answers one row: the
# duplicate it found, the new fact, or that the required page is not there.
_REMEMBER = (
    f"WITH {_PAGE_CHECK}, dup AS MATERIALIZED ("
    "SELECT id, valid_until FROM facts WHERE %(dedup)s AND (SELECT ok FROM page) AND source_id = %(source)s "
    "AND entity_slug = %(entity_slug)s AND fact_norm = %(fact_norm)s AND visibility = %(visibility)s AND expired_at IS NULL "
    "AND (valid_until IS NULL OR valid_until > %(now)s::bigint) ORDER BY id LIMIT 1), "
    f"{_STAMP}, "
    f"ins AS ({_INSERT} WHERE (SELECT ok FROM page) AND NOT EXISTS (SELECT 1 FROM dup) RETURNING id, valid_until) "
    "SELECT 'duplicate' AS status, id, valid_until FROM dup "
    "UNION ALL SELECT 'inserted', id, valid_until FROM ins "
    "UNION ALL SELECT 'no_page', 0, NULL FROM page WHERE NOT ok"
)


def _fact_params(source: str, new: NewFact, now: int) -> dict[str, object]:
    return {
        "source": source, "fact": new.fact, "fact_norm": new.fact_norm, "kind": new.kind,
        "entity_slug": new.entity_slug, "visibility": new.visibility, "notability": new.notability,
        "provenance": new.provenance, "source_session": new.source_session, "context": new.context,
        "confidence": new.confidence, "valid_until": new.valid_until, "valid_from": new.valid_from, "now": now, "project": new.project,
        "search_terms": index_text(new.fact),
        "owner": people.current().person,
    }


class FactStore(PostgresBase):
    def insert_fact(self, source: str, new: NewFact, now: int) -> int:
        with self.write() as db:
            return self._insert(db, source, new, now)

    def _insert(self, db: Conn, source: str, new: NewFact, now: int) -> int:
        return first(db.execute(f"WITH {_STAMP} {_INSERT} RETURNING id", _fact_params(source, new, now)))[0]

    def remember_fact(
        self,
        source: str,
        new: NewFact,
        now: int,
        *,
        vector: bytes | None = None,
        space_id: int | None = None,
        choose: Callable[[list[Row]], tuple[str, Row] | None] | None = None,
        dedup: bool = True,
        require_page: bool = False,
        allow_private: bool = True,
    ) -> tuple[str, int, Row | None]:
        """Write one fact under the dedup rule, atomically (see the SQLite store for the rule and `require_page`)."""
        if vector is None or space_id is None:
            # Nothing for the chooser to compare: the whole write is one statement under the lock.
            params = _fact_params(source, new, now) | {
                "dedup": dedup and new.entity_slug is not None, "require_page": require_page, "allow_private": allow_private,
            }
            row = self.locked_statement(_REMEMBER, params)
            if row["status"] == "duplicate":
                return "duplicate", row["id"], row
            return row["status"], row["id"], None
        # With a vector: three round trips. BEGIN, the lock, the page check, the exact check and the
        # bucket's read; the insert (its id names the vector and the supersession); then those two with COMMIT.
        with self.batched_write() as db:
            page = db.execute(
                f"SELECT 1 FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}", (source, new.entity_slug, allow_private)
            ) if require_page else None
            exact, bucket = None, []
            if new.entity_slug is not None and dedup:
                exact = db.execute(
                    f"SELECT id, valid_until FROM facts WHERE source_id = %s AND entity_slug = %s AND fact_norm = %s "
                    f"AND visibility = %s AND {_ACTIVE} ORDER BY id LIMIT 1",
                    (source, new.entity_slug, new.fact_norm, new.visibility, now),
                )
                bucket = self._bucket_vectors(db, source, new.entity_slug, new.visibility, space_id, now) if choose else []
            if page is not None and page.fetchone() is None:
                return "no_page", 0, None
            decision = None
            if exact is not None:
                dup = exact.fetchone()
                if dup is not None:
                    return "duplicate", dup["id"], dup
                if choose is not None:
                    decision = choose(bucket)
                    if decision is not None and decision[0] == "duplicate":
                        return "duplicate", decision[1]["id"], decision[1]
            fact_id = self._insert(db, source, new, now)
            self._store_fact_vectors(db, space_id, [(fact_id, vector)], now)
            if decision is None:
                return "inserted", fact_id, None
            old = decision[1]
            db.execute(
                "UPDATE facts SET expired_at = %s, expiry_reason = %s, superseded_by = %s WHERE id = %s AND expired_at IS NULL",
                (now, f"superseded by fact #{fact_id}", fact_id, old["id"]),
            )
            return "superseded", fact_id, old

    def fact(self, fact_id: int) -> Row | None:
        return self.one(f"SELECT source_id, {FACT_COLS}, expiry_reason FROM facts WHERE id = %s", (fact_id,))

    def expire_fact(self, fact_id: int, now: int, reason: str) -> bool:
        with self.write() as db:
            cur = db.execute(
                "UPDATE facts SET expired_at = %s, expiry_reason = %s WHERE id = %s AND expired_at IS NULL",
                (now, reason, fact_id),
            )
            return cur.rowcount > 0

    def fact_where(self, source: str, f: FactFilter) -> tuple[str, list]:
        """recall's facts-arm filter as SQL: the WHERE clause and its arguments."""
        where = ["source_id = %s", _WORLD]
        args: list = [source, f.world_only]
        if f.active_only and f.arm != "supersessions":
            where.append(_ACTIVE)
            args.append(f.now)
        if f.arm == "supersessions":
            where.append("superseded_by IS NOT NULL")
            if f.since is not None:
                where.append("COALESCE(expired_at, valid_until) >= %s")
                args.append(f.since)
        else:
            if f.entity_slug is not None:
                where.append("entity_slug = %s")
                args.append(f.entity_slug)
            if f.session_id is not None:
                where.append("source_session = %s")
                args.append(f.session_id)
            if f.since is not None:
                where.append("valid_from >= %s")
                args.append(f.since)
            if f.project is not None:
                where.append("project = %s")
                args.append(f.project)
        return " AND ".join(where), args

    def facts(self, source: str, f: FactFilter) -> list:
        where, args = self.fact_where(source, f)
        sql = f"SELECT {FACT_COLS} FROM facts WHERE {where} ORDER BY {fact_order(f.arm)} LIMIT %s"
        args.append(f.limit)
        return self.query(sql, tuple(args))

    # -- card and pack arms --------------------------------------------------

    def active_commitments(self, source: str, slug: str, *, world_only: bool, now: int, limit: int) -> list:
        return self.query(
            f"SELECT fact, valid_from FROM facts WHERE source_id = %s AND entity_slug = %s AND kind = 'commitment' "
            f"AND {_ACTIVE} AND {_WORLD} ORDER BY valid_from DESC, id DESC LIMIT %s",
            (source, slug, now, world_only, limit),
        )

    def active_fact_count(self, source: str, slug: str, *, world_only: bool, now: int, cap: int = 100) -> int:
        return self.aggregate(
            f"SELECT count(*) FROM (SELECT 1 FROM facts WHERE source_id = %s AND entity_slug = %s AND {_ACTIVE} "
            f"AND {_WORLD} LIMIT %s) capped",
            (source, slug, now, world_only, cap),
        )[0]

    def entity_facts(self, source: str, slugs: list[str], *, world_only: bool, now: int, limit: int) -> list[Row]:
        if not slugs:
            return []
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND entity_slug = ANY(%s) AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY valid_from DESC, id DESC LIMIT %s",
            (source, list(slugs), now, world_only, limit),
        )

    def session_facts(self, source: str, session_id: str, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND source_session = %s AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT %s",
            (source, session_id, now, world_only, limit),
        )

    def recent_facts(self, source: str, created_after: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND created_at >= %s AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT %s",
            (source, created_after, now, world_only, limit),
        )

    def facts_recorded_after(self, source: str, since: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND created_at > %s AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at, id LIMIT %s",
            (source, since, now, world_only, limit),
        )

    def facts_recorded_at(self, source: str, at: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND created_at = %s AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY id LIMIT %s",
            (source, at, now, world_only, limit),
        )

    def recent_entity_slugs(self, source: str, *, limit: int, scan: int = 200) -> list[str]:
        rows = self.query(
            "SELECT entity_slug FROM facts WHERE source_id = %s AND entity_slug IS NOT NULL AND visibility = 'world' "
            "AND expired_at IS NULL ORDER BY created_at DESC LIMIT %s",
            (source, scan),
        )
        return list(dict.fromkeys(r[0] for r in rows))[:limit]

    def facts_ranked(
        self, source: str, f: FactFilter, query: SearchQuery, *, limit: int, among: list[int] | None = None
    ) -> list[Row]:
        """The facts arm `f` allows that hold a query term, best BM25 first, each with its `score` (higher is better).

        Postgres has no BM25, so it is computed here as FTS5 computes it (k1 1.2, b 0.75, idf
        ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, N and the mean length over every fact), from
        the stored terms: both backends rank with the same formula over the same terms.
        """
        q = tsquery(SearchQuery.of(query.terms, "any"))
        if q is None or among == []:
            return []
        where, args = self.fact_where(source, f)
        if among is not None:
            where += " AND id = ANY(%s)"
            args.append(list(among))
        cols = ", ".join("f." + c.strip() for c in FACT_COLS.split(","))
        return self.query(
            "WITH q AS (SELECT t, (SELECT count(*) FROM facts WHERE search @@ quote_literal(t)::tsquery)::float8 AS hits "
            "FROM unnest(%s::text[]) t), "
            "totals AS (SELECT count(*)::float8 AS n, greatest(avg(search_len), 1)::float8 AS avgdl FROM facts), "
            f"hit AS (SELECT id, string_to_array(search_terms, ' ') AS w, search_len FROM facts WHERE search @@ %s::tsquery AND {where}), "
            "scored AS (SELECT hit.id, sum(greatest(ln((totals.n - q.hits + 0.5) / (q.hits + 0.5)), 1e-6) * tf.n * 2.2 "
            "/ (tf.n + 1.2 * (0.25 + 0.75 * hit.search_len / totals.avgdl))) AS score "
            "FROM hit CROSS JOIN totals CROSS JOIN q "
            "CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM unnest(hit.w) x WHERE x = q.t) tf WHERE tf.n > 0 GROUP BY hit.id) "
            f"SELECT {cols}, scored.score FROM scored JOIN facts f ON f.id = scored.id ORDER BY scored.score DESC, f.id DESC LIMIT %s",
            (list(query.terms), q, *args, limit),
        )

    def facts_among(self, source: str, f: FactFilter, ids: list[int]) -> list[Row]:
        if not ids:
            return []
        where, args = self.fact_where(source, f)
        return self.query(f"SELECT {FACT_COLS} FROM facts WHERE {where} AND id = ANY(%s)", (*args, list(ids)))

    def facts_matching(
        self, source: str, query: SearchQuery, *, world_only: bool, now: int, since: int | None, until: int | None, limit: int
    ) -> list:
        """Active facts matching the query, best first, with event time inside the window."""
        q = tsquery(query)
        if q is None:
            return []
        cols = ", ".join("f." + c.strip() for c in FACT_COLS.split(","))
        where = [
            "f.search @@ %s::tsquery",
            "f.source_id = %s",
            "f.expired_at IS NULL",
            "(f.valid_until IS NULL OR f.valid_until > %s)",
            "(NOT %s OR f.visibility = 'world')",
        ]
        args: list = [q, source, now, world_only]
        if since is not None:
            where.append("f.valid_from >= %s")
            args.append(since)
        if until is not None:
            where.append("f.valid_from <= %s")
            args.append(until)
        return self.query(
            f"SELECT {cols} FROM facts f WHERE {' AND '.join(where)} "
            "ORDER BY ts_rank(f.search, %s::tsquery) DESC, f.id LIMIT %s",
            (*args, q, limit),
        )
