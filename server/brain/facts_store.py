"""Facts: written once, expired with a reason, never deleted.

"Active" means not expired and, since memverbs honours ttl (PROTOCOL.md B1),
not past its `valid_until` either. `world_only` is how untrusted callers read.

One store for both backends; each dialect's `# -- facts --` section supplies what they spell
differently: the statement that records a fact (whose clock stamps it, how its values are bound
and its id read back), Postgres's one-statement remember, the full-text arms (FTS5's bm25 over
facts_fts, Postgres's tsvector) and entity_facts' planner hint. SQLite's in-process ranking
(sqlite_fact_rank.py) is reached through its base (`facts_ranked_in_process`).
"""

from __future__ import annotations

from collections.abc import Callable

from memverbs.server import people
from memverbs.server.brain.pages_store import LIVE_PAGE
from memverbs.server.brain.store import Store
from memverbs.server.terms import index_text

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import FactFilter, NewFact, Row, SearchQuery
    from memverbs.server.brain.store import Tx

FACT_COLS = (
    "id, fact, kind, entity_slug, visibility, notability, valid_from, valid_until, expired_at, superseded_by, "
    "consolidated_at, consolidated_into, provenance, source_session, context, confidence, created_at, project"
)
FACT_COLS_F = ", ".join("f." + c.strip() for c in FACT_COLS.split(","))  # the same, of `facts f`
_ACTIVE = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)"
_WORLD = "(NOT ? OR visibility = 'world')"
# The page `require_page` asks for: live, and one the caller may see.
_PAGE_THERE = f"SELECT 1 FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}"
_EXACT = (
    f"SELECT id, valid_until FROM facts WHERE source_id = ? AND entity_slug = ? AND fact_norm = ? "
    f"AND visibility = ? AND {_ACTIVE} ORDER BY id LIMIT 1"
)
_SUPERSEDE = "UPDATE facts SET expired_at = ?, expiry_reason = ?, superseded_by = ? WHERE id = ? AND expired_at IS NULL"
# What a new fact is written with, in `FactStore._fact_values`' order: SQLite's statement reads
# them by position (?1 … ?17), Postgres's by these names (%(name)s, `dialect.fact_params`).
FACT_VALUES = (
    "source", "fact", "fact_norm", "kind", "entity_slug", "visibility", "notability", "provenance", "source_session",
    "context", "confidence", "valid_from", "valid_until", "now", "project", "search_terms", "owner",
)
RANK_FROM_INDEX = 4  # the index-first ranking reads this many times the limit from the index


def fact_order(arm: str) -> str:
    """The order recall's facts arm reads in (and the CLI pages through)."""
    if arm == "supersessions":
        return "COALESCE(expired_at, valid_until) DESC, id DESC"
    return "created_at DESC, id DESC" if arm == "session" else "valid_from DESC, id DESC"


class FactStore(Store):
    def insert_fact(self, source: str, new: NewFact, now: int) -> int:
        with self.write() as db:
            return self._insert(db, source, new, now)

    def _insert(self, db: Tx, source: str, new: NewFact, now: int) -> int:
        values = self.dialect.fact_params(self._fact_values(source, new, now))
        return self.dialect.inserted_fact_id(db.execute(self.dialect.insert_fact, values))

    def _fact_values(self, source: str, new: NewFact, now: int) -> tuple[object, ...]:
        """The values the dialect's statements record a fact with (`insert_fact`, `remember_fact`), as
        FACT_VALUES names them, in its order.

        Its recording time (delta's fact cursor compares them) is stamped inside the write
        transaction, after the write lock is taken, so recording times follow commit order and the
        cursor never skips a fact in flight: `recorded_at` (SQLite's, this process's clock, read
        here) or the statement itself (Postgres's, the database server's clock)."""
        return (
            source, new.fact, new.fact_norm, new.kind, new.entity_slug, new.visibility, new.notability,
            new.provenance, new.source_session, new.context, new.confidence, new.valid_from, new.valid_until,
            self.dialect.recorded_at(now), new.project, index_text(new.fact), people.current().person,
        )

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
        """Write one fact under the dedup rule: (status, id, the existing row it matched or superseded).

        The bucket is the entity's active facts of the new fact's visibility
        (`dedup=False` skips it: see remember). An active fact with the same
        normalised text in the bucket is a duplicate outright. With a vector, `choose` sees the bucket's
        active facts that have vectors in `space_id` and may answer
        ("duplicate", row) or ("superseded", row). The checks, the insert, the
        vector and the old fact's expiry share one write transaction, so two
        processes remembering the same fact at once cannot both insert it.

        `require_page` writes only when a live page the caller may see (`allow_private`) has the
        entity's slug; without one nothing is written and the status is "no_page" (id 0). It
        lets remember check an entity that looks like a slug in the write itself (one round
        trip less on a database server) and resolve it the long way only when that fails.
        """
        checks = new.entity_slug is not None and dedup
        with_vector = vector is not None and space_id is not None
        one_statement = self.dialect.remember_fact
        if one_statement is not None and not with_vector:
            # Nothing for the chooser to compare, and the dialect writes the page check, the exact
            # check and the insert they allow as one statement: it runs under the lock in one round trip.
            params = dict(zip(FACT_VALUES, self._fact_values(source, new, now), strict=True)) | {
                "dedup": checks, "require_page": require_page, "allow_private": allow_private,
            }
            row = self.locked_statement(one_statement, params)
            if row["status"] == "duplicate":
                return "duplicate", row["id"], row
            return row["status"], row["id"], None
        # The checks are sent ahead of their answers (`ahead`): on Postgres the lock, the page
        # check, the exact check and the bucket's read travel in one round trip, the insert (its id
        # names the vector and the supersession) in a second, the rest with COMMIT; on SQLite each
        # check runs only when the one before it let the write go on.
        with self.batched_write() as db:
            page = self.ahead(lambda: db.execute(_PAGE_THERE, (source, new.entity_slug, allow_private))) \
                if require_page else None
            exact = self.ahead(lambda: db.execute(
                _EXACT, (source, new.entity_slug, new.fact_norm, new.visibility, now))) if checks else None
            bucket = None
            if checks and choose is not None and vector is not None and space_id is not None:
                slug, space = new.entity_slug, space_id
                assert slug is not None, "checks asks for an entity"
                bucket = self.ahead(lambda: self._bucket_vectors(db, source, slug, new.visibility, space, now))
            if page is not None and page().fetchone() is None:
                return "no_page", 0, None
            decision = None
            if exact is not None:
                dup = exact().fetchone()
                if dup is not None:
                    return "duplicate", dup["id"], dup
                if bucket is not None:
                    assert choose is not None, "a bucket is read for the chooser"
                    decision = choose(bucket())
                    if decision is not None and decision[0] == "duplicate":
                        return "duplicate", decision[1]["id"], decision[1]
            fact_id = self._insert(db, source, new, now)
            if vector is not None and space_id is not None:
                self._store_fact_vectors(db, space_id, [(fact_id, vector)], now)
            if decision is None:
                return "inserted", fact_id, None
            old = decision[1]
            db.execute(_SUPERSEDE, (now, f"superseded by fact #{fact_id}", fact_id, old["id"]))
            return "superseded", fact_id, old

    def fact(self, fact_id: int) -> Row | None:
        return self.one(f"SELECT source_id, {FACT_COLS}, expiry_reason FROM facts WHERE id = ?", (fact_id,))

    def expire_fact(self, fact_id: int, now: int, reason: str) -> bool:
        with self.write() as db:
            cur = db.execute(
                "UPDATE facts SET expired_at = ?, expiry_reason = ? WHERE id = ? AND expired_at IS NULL",
                (now, reason, fact_id),
            )
            return cur.rowcount > 0

    def fact_where(self, source: str, f: FactFilter) -> tuple[str, list[object]]:
        """recall's facts-arm filter as SQL: the WHERE clause and its arguments."""
        where = ["source_id = ?", _WORLD]
        args: list[object] = [source, f.world_only]
        if f.active_only and f.arm != "supersessions":
            where.append(_ACTIVE)
            args.append(f.now)
        if f.arm == "supersessions":
            where.append("superseded_by IS NOT NULL")
            if f.since is not None:
                where.append("COALESCE(expired_at, valid_until) >= ?")
                args.append(f.since)
        else:
            if f.entity_slug is not None:
                where.append("entity_slug = ?")
                args.append(f.entity_slug)
            if f.session_id is not None:
                where.append("source_session = ?")
                args.append(f.session_id)
            if f.since is not None:
                where.append("valid_from >= ?")
                args.append(f.since)
            if f.project is not None:
                where.append("project = ?")
                args.append(f.project)
        return " AND ".join(where), args

    def facts(self, source: str, f: FactFilter) -> list[Row]:
        where, args = self.fact_where(source, f)
        sql = f"SELECT {FACT_COLS} FROM facts WHERE {where} ORDER BY {fact_order(f.arm)} LIMIT ?"
        args.append(f.limit)
        return self.query(sql, tuple(args))

    # -- card and pack arms --------------------------------------------------

    def active_commitments(self, source: str, slug: str, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT fact, valid_from FROM facts WHERE source_id = ? AND entity_slug = ? AND kind = 'commitment' "
            f"AND {_ACTIVE} AND {_WORLD} ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, slug, now, world_only, limit),
        )

    def active_fact_count(self, source: str, slug: str, *, world_only: bool, now: int, cap: int = 100) -> int:
        return int(self.aggregate(
            f"SELECT count(*) FROM (SELECT 1 FROM facts WHERE source_id = ? AND entity_slug = ? AND {_ACTIVE} "
            f"AND {_WORLD} LIMIT ?) capped",
            (source, slug, now, world_only, cap),
        )[0])

    def entity_facts(self, source: str, slugs: list[str], *, world_only: bool, now: int, limit: int) -> list[Row]:
        if not slugs:
            return []
        among, values = self.dialect.any_of("entity_slug", slugs)
        return self.query(
            f"SELECT {FACT_COLS} FROM {self.dialect.facts_by_entity} WHERE source_id = ? AND {among} "
            f"AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, *values, now, world_only, limit),
        )

    def session_facts(self, source: str, session_id: str, *, world_only: bool, now: int, limit: int) -> list[Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND source_session = ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (source, session_id, now, world_only, limit),
        )

    def recent_facts(self, source: str, created_after: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        """Active facts recorded at or after `created_after`, newest first."""
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND created_at >= ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (source, created_after, now, world_only, limit),
        )

    def facts_recorded_after(self, source: str, since: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        """delta's facts arm: active facts recorded strictly after `since`, oldest first."""
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND created_at > ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at, id LIMIT ?",
            (source, since, now, world_only, limit),
        )

    def facts_recorded_at(self, source: str, at: int, *, world_only: bool, now: int, limit: int) -> list[Row]:
        """Active facts recorded in one millisecond, in id order (a bulk import's batch)."""
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND created_at = ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY id LIMIT ?",
            (source, at, now, world_only, limit),
        )

    def recent_entity_slugs(self, source: str, *, limit: int, scan: int = 200) -> list[str]:
        """Entities the brain most recently learned world-visible facts about (hook standing entities)."""
        rows = self.query(
            "SELECT entity_slug FROM facts WHERE source_id = ? AND entity_slug IS NOT NULL AND visibility = 'world' "
            "AND expired_at IS NULL ORDER BY created_at DESC LIMIT ?",
            (source, scan),
        )
        return list(dict.fromkeys(r[0] for r in rows))[:limit]

    # -- full-text arms --------------------------------------------------------

    def facts_ranked(
        self, source: str, f: FactFilter, query: SearchQuery, *, limit: int, among: list[int] | None = None
    ) -> list[Row]:
        """The facts arm `f` allows that hold a query term, best BM25 first, each with its `score` (higher is better).

        Both backends rank with BM25 as FTS5 computes it, over the same stored terms
        (`dialect.facts_ranked`)."""
        terms = self.dialect.ranked_terms(query)
        if terms is None or among == []:
            return []
        where, args = self.fact_where(source, f)
        # The same ranking and scores as the statements below, where the backend computes them in
        # this process (SQLite: sqlite_fact_rank.py); None: the statements rank.
        world = f.world_only  # BM25 over the world facts alone: no private fact moves a world caller's ranking
        ranked = self.facts_ranked_in_process(query.terms, where, args, FACT_COLS, limit=limit, among=among, world=world)
        if ranked is not None:
            return ranked
        if among is None:
            in_index = self.dialect.facts_ranked_in_index(where, world)
            if in_index is not None:
                # Most of the best matches pass the arm's filter (one source, active, world): rank in
                # the index alone and read only the best rows. When the index matched fewer than it
                # was asked for (`matched`) it ranked them all; when it matched more and too few pass,
                # the whole ranking below decides. Ties go by id (newest first) in both, so they agree.
                rows = self.query(in_index, (*terms, limit * RANK_FROM_INDEX, *args, limit))
                if len(rows) == limit or (rows and rows[0]["matched"] < limit * RANK_FROM_INDEX):
                    return rows
        else:
            only, ids = self.dialect.any_of("id", among)
            where += f" AND {only}"
            args.extend(ids)
        return self.query(self.dialect.facts_ranked(where, terms, world), (*terms, *args, limit))

    def facts_among(self, source: str, f: FactFilter, ids: list[int]) -> list[Row]:
        """Those of `ids` the arm `f` allows (any order)."""
        if not ids:
            return []
        where, args = self.fact_where(source, f)
        only, values = self.dialect.any_of("id", ids)
        return self.query(f"SELECT {FACT_COLS} FROM facts WHERE {where} AND {only}", (*args, *values))

    def facts_matching(
        self, source: str, query: SearchQuery, *, world_only: bool, now: int, since: int | None, until: int | None, limit: int
    ) -> list[Row]:
        """Active facts matching the query, best first, with event time inside the window."""
        where = [
            "f.source_id = ?",
            "f.expired_at IS NULL",
            "(f.valid_until IS NULL OR f.valid_until > ?)",
            "(NOT ? OR f.visibility = 'world')",
        ]
        args: list[object] = [source, now, world_only]
        if since is not None:
            where.append("f.valid_from >= ?")
            args.append(since)
        if until is not None:
            where.append("f.valid_from <= ?")
            args.append(until)
        statement = self.dialect.facts_matching(query, " AND ".join(where), args, limit, world_only)
        return [] if statement is None else self.query(*statement)
