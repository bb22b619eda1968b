"""What the CLI shows a person browsing the brain: entities, stats, backlinks, timelines, a fact's history.

These reads are for the trusted local caller only (they see private rows and
mark them); no MCP tool calls them. The writes here are the trusted caller's repairs,
each audited: `move_facts` refiles facts under another entity (every move in `fact_moves`);
`restore_fact` and `set_fact_visibility` change one fact under the rules of fact_edits.py
(every change in `fact_audit`).
"""

from __future__ import annotations

import sqlite3

from memverbs.server import people
from memverbs.server.brain.fact_edits import restore_refusal, visibility_refusal
from memverbs.server.brain.sqlite_base import SqliteBase
from memverbs.server.brain.sqlite_facts import FACT_COLS, FactFilter

_ACTIVE = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > :now)"


class BrowseStore(SqliteBase):
    def entities(
        self,
        source: str,
        now: int,
        *,
        with_page: bool | None = None,
        type_: str | None = None,
        prefix: str | None = None,
    ) -> list[sqlite3.Row]:
        """Every entity with a live page or a fact, most recently touched first.

        A row: slug, title, type, visibility (of the page, None without one), has_page,
        facts (all), active, private (facts), last_touched (epoch ms).
        """
        where = ["1"]
        args: dict = {"s": source, "now": now}
        if with_page is not None:
            where.append("has_page = :hp")
            args["hp"] = int(with_page)
        if type_:
            where.append("type = :type")
            args["type"] = type_
        if prefix:
            where.append("substr(slug, 1, length(:prefix)) = :prefix")
            args["prefix"] = prefix
        return self.query(
            f"""
            WITH f AS (
                SELECT entity_slug AS slug, count(*) AS facts,
                       sum(CASE WHEN {_ACTIVE} THEN 1 ELSE 0 END) AS active,
                       sum(visibility = 'private') AS private, max(created_at) AS last_fact
                FROM facts WHERE source_id = :s AND entity_slug IS NOT NULL GROUP BY entity_slug
            ),
            p AS (SELECT slug, title, type, visibility, updated_at FROM pages WHERE source_id = :s AND deleted_at IS NULL),
            e AS (
                SELECT p.slug, p.title, p.type, p.visibility, 1 AS has_page, coalesce(f.facts, 0) AS facts,
                       coalesce(f.active, 0) AS active, coalesce(f.private, 0) AS private,
                       max(p.updated_at, coalesce(f.last_fact, 0)) AS last_touched
                FROM p LEFT JOIN f ON f.slug = p.slug
                UNION ALL
                SELECT f.slug, NULL, NULL, NULL, 0, f.facts, f.active, f.private, f.last_fact
                FROM f WHERE f.slug NOT IN (SELECT slug FROM p)
            )
            SELECT * FROM e WHERE {' AND '.join(where)} ORDER BY last_touched DESC, slug
            """,
            args,
        )

    def entity_window(self, source: str, now: int, *, search: str = "", offset: int = 0,
                      limit: int = 50) -> tuple[int, list[sqlite3.Row]]:
        """One page of every entity (a live page or a fact), by slug, and how many match in all.

        `search` matches a slug or a page title, case-insensitively. Only the window's entities
        are counted and joined, so a page of a 20K-entity brain costs what a page costs.
        """
        args: dict = {"s": source, "now": now, "q": search.strip().lower(), "limit": limit, "offset": offset}
        names = (
            "WITH names AS (SELECT slug FROM pages WHERE source_id = :s AND deleted_at IS NULL "
            "UNION SELECT entity_slug FROM facts WHERE source_id = :s AND entity_slug IS NOT NULL) "
        )
        match = "1"
        if args["q"]:
            match = ("(instr(lower(slug), :q) > 0 OR slug IN (SELECT slug FROM pages WHERE source_id = :s "
                     "AND deleted_at IS NULL AND instr(lower(coalesce(title, '')), :q) > 0))")
        picked = self.query(
            f"{names} SELECT slug, count(*) OVER () AS total FROM names WHERE {match} ORDER BY slug LIMIT :limit OFFSET :offset",
            args,
        )
        slugs = [r["slug"] for r in picked]
        if not slugs:
            total = self.aggregate(f"{names} SELECT count(*) FROM names WHERE {match}", args)[0] if offset else 0
            return total, []
        total = picked[0]["total"]
        marks = ", ".join(f":e{i}" for i in range(len(slugs)))
        args.update({f"e{i}": slug for i, slug in enumerate(slugs)})
        rows = self.query(
            f"""
            WITH w(slug) AS (VALUES {", ".join(f"(:e{i})" for i in range(len(slugs)))}),
            f AS (
                SELECT entity_slug AS slug, count(*) AS facts,
                       sum(CASE WHEN {_ACTIVE} THEN 1 ELSE 0 END) AS active,
                       sum(visibility = 'private') AS private, max(created_at) AS last_fact
                FROM facts WHERE source_id = :s AND entity_slug IN ({marks}) GROUP BY entity_slug
            ),
            p AS (SELECT slug, title, type, visibility, updated_at FROM pages
                  WHERE source_id = :s AND deleted_at IS NULL AND slug IN ({marks}))
            SELECT w.slug, p.title, p.type, p.visibility, p.slug IS NOT NULL AS has_page,
                   coalesce(f.facts, 0) AS facts, coalesce(f.active, 0) AS active, coalesce(f.private, 0) AS private,
                   max(coalesce(p.updated_at, 0), coalesce(f.last_fact, 0)) AS last_touched
            FROM w LEFT JOIN p ON p.slug = w.slug LEFT JOIN f ON f.slug = w.slug ORDER BY w.slug
            """,
            args,
        )
        return total, rows

    def fact_only_slugs_ending(self, source: str, slug: str) -> list[tuple[str, int]]:
        """Fact entities with no live page whose slug is a '/'-suffix of `slug` (alice-example for
        people/alice-example): facts filed before the page existed. (slug, fact count) pairs."""
        parts = slug.split("/")
        tails = ["/".join(parts[i:]) for i in range(1, len(parts))]
        if not tails:
            return []
        marks = ",".join("?" * len(tails))
        rows = self.query(
            f"SELECT entity_slug, count(*) FROM facts WHERE source_id = ? AND entity_slug IN ({marks}) "
            "AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = facts.source_id AND p.slug = facts.entity_slug "
            "AND p.deleted_at IS NULL) GROUP BY entity_slug ORDER BY length(entity_slug) DESC",
            (source, *tails),
        )
        return [(r[0], r[1]) for r in rows]

    def stats(self, source: str, now: int) -> dict:
        one = lambda sql, *a: self.aggregate(sql, (source, *a))[0]  # noqa: E731 - a local shorthand
        facts = self.aggregate(
            f"SELECT count(*), coalesce(sum({_ACTIVE.replace(':now', '?')}), 0), "
            "coalesce(sum(expired_at IS NOT NULL AND superseded_by IS NULL), 0), "
            "coalesce(sum(superseded_by IS NOT NULL), 0), coalesce(sum(visibility = 'private'), 0), "
            "coalesce(sum(expired_at IS NULL AND valid_until IS NOT NULL AND valid_until <= ?), 0), max(created_at) "
            "FROM facts WHERE source_id = ?",
            (now, now, source),
        )
        return {
            "pages": one("SELECT count(*) FROM pages WHERE source_id = ? AND deleted_at IS NULL"),
            "private_pages": one(
                "SELECT count(*) FROM pages WHERE source_id = ? AND deleted_at IS NULL AND visibility = 'private'"
            ),
            "deleted_pages": one("SELECT count(*) FROM pages WHERE source_id = ? AND deleted_at IS NOT NULL"),
            "facts": facts[0],
            "active_facts": facts[1],
            "expired_facts": facts[2],
            "superseded_facts": facts[3],
            "private_facts": facts[4],
            "lapsed_facts": facts[5],
            "entities": one(
                "SELECT count(*) FROM (SELECT slug FROM pages WHERE source_id = ?1 AND deleted_at IS NULL "
                "UNION SELECT entity_slug FROM facts WHERE source_id = ?1 AND entity_slug IS NOT NULL)"
            ),
            "links": one("SELECT count(*) FROM links WHERE source_id = ?"),
            "aliases": one("SELECT count(*) FROM aliases WHERE source_id = ?"),
            "timeline_entries": one("SELECT count(*) FROM timeline WHERE source_id = ?"),
            "chunks": one("SELECT count(*) FROM chunks WHERE source_id = ?"),
            "text_vectors": self.aggregate("SELECT count(*) FROM text_vectors")[0],
            "fact_vectors": self.aggregate("SELECT count(*) FROM fact_vectors")[0],
            "last_page_write": one("SELECT max(updated_at) FROM pages WHERE source_id = ?"),
            "last_fact_write": facts[6],
            # The file and its write-ahead log: what the brain occupies on disk.
            "brain_bytes": sum(
                p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists()
            ),
        }

    def backlinks(self, source: str, slug: str, limit: int) -> list[sqlite3.Row]:
        """Every link into `slug` from a live page (mentions too), with the linking page's title."""
        return self.query(
            "SELECT l.from_slug AS slug, p.title, p.visibility, l.link_type, l.link_source, l.context, l.created_at "
            "FROM links l JOIN pages p ON p.source_id = l.source_id AND p.slug = l.from_slug AND p.deleted_at IS NULL "
            "WHERE l.source_id = ? AND l.to_slug = ? ORDER BY l.created_at DESC, l.id DESC LIMIT ?",
            (source, slug, limit),
        )

    def timeline_entries(self, source: str, slug: str, limit: int) -> list[sqlite3.Row]:
        return self.query(
            "SELECT date, summary, detail, origin, created_at FROM timeline WHERE source_id = ? AND slug = ? "
            "ORDER BY date DESC, id DESC LIMIT ?",
            (source, slug, limit),
        )

    def _window_where(self, source: str, f: FactFilter, grep: str | None) -> tuple[str, list]:
        where, args = self.fact_where(source, f)
        if grep:
            # recall's grep: a case-insensitive substring (lower() is ASCII-only in SQLite, like
            # most needles; the wire applies Python's lower() to the returned page instead).
            where += " AND instr(lower(fact), lower(?)) > 0"
            args.append(grep)
        return where, args

    def fact_count(self, source: str, f: FactFilter, grep: str | None = None) -> int:
        """How many facts recall's facts arm matches before its limit: the true total."""
        where, args = self._window_where(source, f, grep)
        return self.aggregate(f"SELECT count(*) FROM facts WHERE {where}", tuple(args))[0]

    def fact_window(self, source: str, f: FactFilter, offset: int, grep: str | None = None) -> list[sqlite3.Row]:
        """recall's facts arm from `offset` on, in the arm's order (the CLI's paging)."""
        where, args = self._window_where(source, f, grep)
        order = "COALESCE(expired_at, valid_until) DESC, id DESC" if f.arm == "supersessions" else (
            "created_at DESC, id DESC" if f.arm == "session" else "valid_from DESC, id DESC"
        )
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            (*args, f.limit, offset),
        )

    def fact_trail(self, fact_id: int) -> dict:
        """A fact's history: the facts it superseded, the one that superseded it, and its moves."""
        return {
            "supersedes": self.query(
                f"SELECT {FACT_COLS}, expiry_reason FROM facts WHERE superseded_by = ? ORDER BY id", (fact_id,)
            ),
            "moves": self.query(
                "SELECT from_slug, to_slug, reason, moved_at FROM fact_moves WHERE fact_id = ? ORDER BY id", (fact_id,)
            ),
            "audit": self.query(
                "SELECT action, old_value, old_at, new_value, reason, actor, at FROM fact_audit WHERE fact_id = ? ORDER BY id",
                (fact_id,),
            ),
        }

    def restore_fact(self, source: str, fact_id: int, *, reason: str, actor: str, now: int) -> sqlite3.Row:
        """Bring a forgotten fact back (fact_edits.py says when it may), keeping the expiry it undoes
        in `fact_audit`; the fact as it now is. Raises FactEditRefused with nothing written."""
        with self.write() as db:
            row = db.execute(
                f"SELECT {FACT_COLS}, expiry_reason FROM facts WHERE id = ? AND source_id = ?", (fact_id, source)
            ).fetchone()
            page_deleted, restated_by = False, None
            if row is not None and row["entity_slug"] is not None:
                page = db.execute(
                    "SELECT deleted_at FROM pages WHERE source_id = ? AND slug = ?", (source, row["entity_slug"])
                ).fetchone()
                page_deleted = page is not None and page["deleted_at"] is not None
                same = db.execute(
                    f"SELECT id FROM facts WHERE source_id = :s AND entity_slug = :e AND fact_norm = "
                    f"(SELECT fact_norm FROM facts WHERE id = :id) AND visibility = :vis AND id != :id AND {_ACTIVE} "
                    "ORDER BY id LIMIT 1",
                    {"s": source, "e": row["entity_slug"], "id": fact_id, "vis": row["visibility"], "now": now},
                ).fetchone()
                restated_by = same["id"] if same is not None else None
            refused = restore_refusal(fact_id, row, now=now, page_deleted=page_deleted, restated_by=restated_by)
            if refused is not None:
                raise refused
            db.execute("UPDATE facts SET expired_at = NULL, expiry_reason = NULL WHERE id = ?", (fact_id,))
            db.execute(
                "INSERT INTO fact_audit (fact_id, action, old_value, old_at, reason, actor, at) "
                "VALUES (?, 'restored', ?, ?, ?, ?, ?)",
                (fact_id, row["expiry_reason"], row["expired_at"], reason, actor, now),
            )
            return db.execute(f"SELECT {FACT_COLS}, expiry_reason FROM facts WHERE id = ?", (fact_id,)).fetchone()

    def set_fact_visibility(self, source: str, fact_id: int, visibility: str, *, widen: bool, reason: str,
                            actor: str, now: int) -> bool:
        """Make one fact world or private, audited in `fact_audit`; False when it already was.
        Widening needs `widen=True`, and an active fact is not given a visibility in which an active
        fact already says the same (fact_edits.py). Raises FactEditRefused with nothing written."""
        with self.write() as db:
            params = {"s": source, "id": fact_id, "vis": visibility, "now": now}
            row = db.execute(
                f"SELECT visibility, entity_slug, fact_norm, {_ACTIVE} AS active FROM facts WHERE id = :id AND source_id = :s",
                params,
            ).fetchone()
            current = row["visibility"] if row is not None else None
            restated_by = None
            if row is not None and row["active"] and row["entity_slug"] is not None and current != visibility:
                same = db.execute(
                    "SELECT id FROM facts WHERE source_id = :s AND entity_slug = :e AND fact_norm = :n AND visibility = :vis "
                    f"AND id != :id AND {_ACTIVE} ORDER BY id LIMIT 1",
                    {**params, "e": row["entity_slug"], "n": row["fact_norm"]},
                ).fetchone()
                restated_by = same["id"] if same is not None else None
            refused = visibility_refusal(fact_id, current, visibility, widen=widen, restated_by=restated_by)
            if refused is not None:
                raise refused
            if current == visibility:
                return False
            # A fact made private is the private fact of whoever made it so (people.py).
            db.execute(
                "UPDATE facts SET visibility = ?, owner = CASE WHEN ? = 'private' THEN ? ELSE owner END WHERE id = ?",
                (visibility, visibility, people.current().person or people.OWNER, fact_id),
            )
            db.execute(
                "INSERT INTO fact_audit (fact_id, action, old_value, new_value, reason, actor, at) "
                "VALUES (?, 'visibility', ?, ?, ?, ?, ?)",
                (fact_id, current, visibility, reason, actor, now),
            )
            return True

    def move_facts(self, source: str, from_slug: str, to_slug: str, reason: str, now: int) -> list[tuple[int, str]]:
        """Refile every fact about `from_slug` under `to_slug`, in one transaction; each move is audited.

        A moved fact that restates an active fact already filed under `to_slug` (same text, same
        visibility) is expired as its duplicate, as remember would have answered. Returns
        (fact id, moved | duplicate) pairs.
        """
        out: list[tuple[int, str]] = []
        with self.write() as db:
            rows = db.execute(
                "SELECT id, fact_norm, visibility, expired_at FROM facts WHERE source_id = ? AND entity_slug = ? ORDER BY id",
                (source, from_slug),
            ).fetchall()
            for row in rows:
                db.execute("UPDATE facts SET entity_slug = ? WHERE id = ?", (to_slug, row["id"]))
                db.execute(
                    "INSERT INTO fact_moves (fact_id, from_slug, to_slug, reason, moved_at) VALUES (?, ?, ?, ?, ?)",
                    (row["id"], from_slug, to_slug, reason, now),
                )
                status = "moved"
                if row["expired_at"] is None:
                    dup = db.execute(
                        f"SELECT id FROM facts WHERE source_id = :s AND entity_slug = :to AND fact_norm = :norm "
                        f"AND visibility = :vis AND id != :id AND {_ACTIVE} ORDER BY id LIMIT 1",
                        {"s": source, "to": to_slug, "norm": row["fact_norm"], "vis": row["visibility"],
                         "id": row["id"], "now": now},
                    ).fetchone()
                    if dup is not None:
                        db.execute(
                            "UPDATE facts SET expired_at = ?, expiry_reason = ? WHERE id = ?",
                            (now, f"duplicate of fact #{dup['id']} after moving to {to_slug}", row["id"]),
                        )
                        status = "duplicate"
                out.append((row["id"], status))
        return out

    # -- the inspector's live feed (`memverbs ui`) ----------------------------------------------

    def fact_changes(self, source: str, after: int, *, entity: str | None = None, kind: str | None = None,
                     visibility: str | None = None, provenance: str | None = None, until: int | None = None,
                     limit: int = 200) -> list[sqlite3.Row]:
        """Facts remembered, expired, restored or made world/private at or after `after` (epoch ms),
        newest change first.

        `changed_at` is the latest of those moments, so a fact forgotten a minute ago comes back
        to the top of the feed with its new state. The newest `limit` by that moment are among
        the newest `limit` by each one, so each is read on its own (down its own index).
        """
        where = ["source_id = :s"]
        args: dict = {"s": source, "after": after, "limit": limit}
        for col, key, value in (("entity_slug", "entity", entity), ("kind", "kind", kind), ("visibility", "vis", visibility)):
            if value:
                where.append(f"{col} = :{key}")
                args[key] = value
        if provenance:
            where.append("instr(lower(coalesce(provenance, '')), lower(:prov)) > 0")
            args["prov"] = provenance
        if until is not None:
            where.append("created_at <= :until")
            args["until"] = until
        changed = ("max(created_at, coalesce(expired_at, 0), "
                   "coalesce((SELECT max(at) FROM fact_audit a WHERE a.fact_id = facts.id), 0)) AS changed_at")
        rows: dict[int, sqlite3.Row] = {}
        for col in ("created_at", "expired_at"):
            for r in self.query(
                f"SELECT {FACT_COLS}, expiry_reason, {changed} FROM facts "
                f"WHERE {' AND '.join(where)} AND {col} >= :after ORDER BY {col} DESC, id DESC LIMIT :limit",
                args,
            ):
                rows[r["id"]] = r
        # Restores and visibility changes: their moment is in `fact_audit` (few rows: people's edits).
        for r in self.query(
            f"SELECT {FACT_COLS}, expiry_reason, {changed} FROM facts "
            "JOIN (SELECT fact_id, max(at) AS edited FROM fact_audit WHERE at >= :after GROUP BY fact_id) e "
            f"ON e.fact_id = facts.id WHERE {' AND '.join(where)} ORDER BY e.edited DESC, id DESC LIMIT :limit",
            args,
        ):
            rows[r["id"]] = r
        return sorted(rows.values(), key=lambda r: (r["changed_at"], r["id"]), reverse=True)[:limit]

    def page_changes(self, source: str, after: int, *, entity: str | None = None, visibility: str | None = None,
                     until: int | None = None, limit: int = 200) -> list[sqlite3.Row]:
        """Pages written or deleted at or after `after`, newest first, private ones included."""
        where = ["source_id = :s"]
        args: dict = {"s": source, "after": after, "limit": limit}
        if entity:
            where.append("slug = :slug")
            args["slug"] = entity
        if visibility:
            where.append("visibility = :vis")
            args["vis"] = visibility
        if until is not None:
            where.append("updated_at <= :until")
            args["until"] = until
        rows: dict[str, sqlite3.Row] = {}
        for branch, col in (("deleted_at IS NULL AND updated_at >= :after", "updated_at"), ("deleted_at >= :after", "deleted_at")):
            for r in self.query(
                "SELECT slug, title, type, visibility, updated_at, deleted_at, "
                f"max(updated_at, coalesce(deleted_at, 0)) AS changed_at FROM pages WHERE {' AND '.join(where)} AND {branch} "
                f"ORDER BY {col} DESC LIMIT :limit",
                args,
            ):
                rows[r["slug"]] = r
        return sorted(rows.values(), key=lambda r: (r["changed_at"], r["slug"]), reverse=True)[:limit]
