"""Facts in the SQLite brain: written once, expired with a reason, never deleted.

"Active" means not expired and, since memverbs honours ttl (PROTOCOL.md B1),
not past its `valid_until` either. `world_only` is how untrusted callers read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from memverbs.server import people
from memverbs.server.brain.base import FactFilter, NewFact, SearchQuery
from memverbs.server.brain.pages_store import LIVE_PAGE
from memverbs.server.brain.sqlite_base import SqliteBase
from memverbs.server.brain.sqlite_dialect import fts5_match
from memverbs.server.brain.sqlite_fact_rank import rank_in_process
from memverbs.server.terms import index_text
from memverbs.server.timeparse import now_ms

FACT_COLS = (
    "id, fact, kind, entity_slug, visibility, notability, valid_from, valid_until, expired_at, superseded_by, "
    "consolidated_at, consolidated_into, provenance, source_session, context, confidence, created_at, project"
)
_ACTIVE = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)"
_WORLD = "(NOT ? OR visibility = 'world')"


class FactStore(SqliteBase):
    def insert_fact(self, source: str, new: NewFact, now: int) -> int:
        with self.write() as db:
            return self._insert(db, source, new, now)

    def _insert(self, db: sqlite3.Connection, source: str, new: NewFact, now: int) -> int:
        # Stamped inside the write transaction, after the lock is taken: writers are serialised,
        # so recording times follow commit order and delta's fact cursor never skips a fact that
        # was still in flight.
        now = max(now, now_ms())
        cur = db.execute(
            "INSERT INTO facts (source_id, fact, fact_norm, kind, entity_slug, visibility, notability, provenance, "
            "source_session, context, confidence, valid_from, valid_until, created_at, project, search_terms, owner) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                source,
                new.fact,
                new.fact_norm,
                new.kind,
                new.entity_slug,
                new.visibility,
                new.notability,
                new.provenance,
                new.source_session,
                new.context,
                new.confidence,
                now if new.valid_from is None else new.valid_from,
                new.valid_until,
                now,
                new.project,
                index_text(new.fact),
                people.current().person or people.OWNER,
            ),
        )
        return self.inserted_id(cur)

    def remember_fact(
        self,
        source: str,
        new: NewFact,
        now: int,
        *,
        vector: bytes | None = None,
        space_id: int | None = None,
        choose: Callable[[list[sqlite3.Row]], tuple[str, sqlite3.Row] | None] | None = None,
        dedup: bool = True,
        require_page: bool = False,
        allow_private: bool = True,
    ) -> tuple[str, int, sqlite3.Row | None]:
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
        with self.write() as db:
            if require_page and not db.execute(
                f"SELECT 1 FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}",
                (source, new.entity_slug, allow_private),
            ).fetchone():
                return "no_page", 0, None
            decision = None
            if new.entity_slug is not None and dedup:
                dup = db.execute(
                    f"SELECT id, valid_until FROM facts WHERE source_id = ? AND entity_slug = ? AND fact_norm = ? "
                    f"AND visibility = ? AND {_ACTIVE} ORDER BY id LIMIT 1",
                    (source, new.entity_slug, new.fact_norm, new.visibility, now),
                ).fetchone()
                if dup is not None:
                    return "duplicate", dup["id"], dup
                if vector is not None and space_id is not None and choose is not None:
                    decision = choose(self._bucket_vectors(db, source, new.entity_slug, new.visibility, space_id, now))
                    if decision is not None and decision[0] == "duplicate":
                        return "duplicate", decision[1]["id"], decision[1]
            fact_id = self._insert(db, source, new, now)
            if vector is not None and space_id is not None:
                self._store_fact_vectors(db, space_id, [(fact_id, vector)], now)
            if decision is None:
                return "inserted", fact_id, None
            old = decision[1]
            db.execute(
                "UPDATE facts SET expired_at = ?, expiry_reason = ?, superseded_by = ? WHERE id = ? AND expired_at IS NULL",
                (now, f"superseded by fact #{fact_id}", fact_id, old["id"]),
            )
            return "superseded", fact_id, old

    def fact(self, fact_id: int) -> sqlite3.Row | None:
        return self.one(f"SELECT source_id, {FACT_COLS}, expiry_reason FROM facts WHERE id = ?", (fact_id,))

    def expire_fact(self, fact_id: int, now: int, reason: str) -> bool:
        with self.write() as db:
            cur = db.execute(
                "UPDATE facts SET expired_at = ?, expiry_reason = ? WHERE id = ? AND expired_at IS NULL",
                (now, reason, fact_id),
            )
            return cur.rowcount > 0

    def fact_where(self, source: str, f: FactFilter) -> tuple[str, list]:
        """recall's facts-arm filter as SQL: the WHERE clause and its arguments."""
        where = ["source_id = ?", _WORLD]
        args: list = [source, f.world_only]
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

    def facts(self, source: str, f: FactFilter) -> list[sqlite3.Row]:
        where, args = self.fact_where(source, f)
        if f.arm == "supersessions":
            order = "COALESCE(expired_at, valid_until) DESC, id DESC"
        else:
            order = {
                "entity": "valid_from DESC, id DESC",
                "session": "created_at DESC, id DESC",
            }.get(f.arm, "valid_from DESC, id DESC")
        sql = f"SELECT {FACT_COLS} FROM facts WHERE {where} ORDER BY {order} LIMIT ?"
        args.append(f.limit)
        return self.query(sql, tuple(args))

    # -- card and pack arms --------------------------------------------------

    def active_commitments(self, source: str, slug: str, *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT fact, valid_from FROM facts WHERE source_id = ? AND entity_slug = ? AND kind = 'commitment' "
            f"AND {_ACTIVE} AND {_WORLD} ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, slug, now, world_only, limit),
        )

    def active_fact_count(self, source: str, slug: str, *, world_only: bool, now: int, cap: int = 100) -> int:
        return self.aggregate(
            f"SELECT count(*) FROM (SELECT 1 FROM facts WHERE source_id = ? AND entity_slug = ? AND {_ACTIVE} "
            f"AND {_WORLD} LIMIT ?)",
            (source, slug, now, world_only, cap),
        )[0]

    def entity_facts(self, source: str, slugs: list[str], *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
        if not slugs:
            return []
        marks = ",".join("?" * len(slugs))
        # Pinned: unpinned, the planner walks every fact of the source in valid_from order to
        # skip the sort, a full scan for entities with few facts (docs/architecture.md, "Query plans").
        return self.query(
            f"SELECT {FACT_COLS} FROM facts INDEXED BY facts_entity WHERE source_id = ? AND entity_slug IN ({marks}) "
            f"AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, *slugs, now, world_only, limit),
        )

    def session_facts(self, source: str, session_id: str, *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND source_session = ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (source, session_id, now, world_only, limit),
        )

    def recent_facts(self, source: str, created_after: int, *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
        """Active facts recorded at or after `created_after`, newest first."""
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND created_at >= ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (source, created_after, now, world_only, limit),
        )

    def facts_recorded_after(self, source: str, since: int, *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
        """delta's facts arm: active facts recorded strictly after `since`, oldest first."""
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = ? AND created_at > ? AND {_ACTIVE} AND {_WORLD} "
            "ORDER BY created_at, id LIMIT ?",
            (source, since, now, world_only, limit),
        )

    def facts_recorded_at(self, source: str, at: int, *, world_only: bool, now: int, limit: int) -> list[sqlite3.Row]:
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

    def facts_ranked(
        self, source: str, f: FactFilter, query: SearchQuery, *, limit: int, among: list[int] | None = None
    ) -> list[sqlite3.Row]:
        """The facts arm `f` allows that hold a query term, best BM25 first, each with its `score` (higher is better)."""
        if not query.terms or among == []:
            return []
        where, args = self.fact_where(source, f)
        # The same ranking and scores as the FTS5 queries below, computed in-process (sqlite_fact_rank.py).
        ranked = rank_in_process(self, self.path, self.db, query.terms, where, args, FACT_COLS, limit=limit, among=among)
        if ranked is not None:
            return ranked
        match = fts5_match(query)
        if among is None:
            # Most of the best matches pass the arm's filter (one source, active, world): rank in the
            # index alone and read only the best rows. When the index matched fewer than it was asked
            # for (`matched`) it ranked them all; when it matched more and too few pass, the whole
            # ranking below decides. Ties go by id (newest first) in both, so they agree.
            rows = self.query(
                f"SELECT {FACT_COLS}, -hits.score AS score, hits.matched AS matched FROM (SELECT rowid, score, "
                f"count(*) OVER () AS matched FROM (SELECT rowid, bm25(facts_fts) AS score FROM facts_fts "
                f"WHERE facts_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?)) hits JOIN facts ON facts.id = hits.rowid "
                f"WHERE {where} ORDER BY hits.score, id DESC LIMIT ?",
                (match, limit * 4, *args, limit),
            )
            if len(rows) == limit or (rows and rows[0]["matched"] < limit * 4):
                return rows
        else:
            where += f" AND id IN ({','.join('?' * len(among))})"
            args.extend(among)
        return self.query(
            f"SELECT {FACT_COLS}, -bm25(facts_fts) AS score FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts), id DESC LIMIT ?",
            (match, *args, limit),
        )

    def facts_among(self, source: str, f: FactFilter, ids: list[int]) -> list[sqlite3.Row]:
        """Those of `ids` the arm `f` allows (any order)."""
        if not ids:
            return []
        where, args = self.fact_where(source, f)
        return self.query(f"SELECT {FACT_COLS} FROM facts WHERE {where} AND id IN ({','.join('?' * len(ids))})", (*args, *ids))

    def facts_matching(
        self, source: str, query: SearchQuery, *, world_only: bool, now: int, since: int | None, until: int | None, limit: int
    ) -> list[sqlite3.Row]:
        """Active facts matching the query, best first, with event time inside the window."""
        return self.query(
            f"SELECT {', '.join('f.' + c.strip() for c in FACT_COLS.split(','))} FROM facts_fts "
            "JOIN facts f ON f.id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND f.source_id = ? AND f.expired_at IS NULL "
            "AND (f.valid_until IS NULL OR f.valid_until > ?) AND (NOT ? OR f.visibility = 'world') "
            "AND (? IS NULL OR f.valid_from >= ?) AND (? IS NULL OR f.valid_from <= ?) "
            "ORDER BY bm25(facts_fts) LIMIT ?",
            (fts5_match(query), source, now, world_only, since, since, until, until, limit),
        )
