"""What the CLI shows a person browsing the brain: entities, stats, backlinks, timelines, a fact's history.

These reads are for the trusted local caller only (they see private rows and
mark them); no MCP tool calls them. The writes here are the trusted caller's repairs,
each audited and each one transaction under the write lock: `move_facts` refiles facts under
another entity (every move in `fact_moves`); `restore_fact` and `set_fact_visibility` change one
fact under the rules of fact_edits.py (every change in `fact_audit`).

Counts come back as Python ints on both backends (`count(*) FILTER`, never `sum()`, which
Postgres answers as numeric).
"""

from __future__ import annotations

from memverbs.server import people
from memverbs.server.brain.fact_edits import restore_refusal, visibility_refusal
from memverbs.server.brain.facts_store import FACT_COLS
from memverbs.server.brain.store import Store, first

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import FactFilter, Row
    from memverbs.server.brain.store import Tx

_ACTIVE = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)"
# recall's facts arm's order, per arm (the CLI pages through it in the same order).
_ARM_ORDER = {"supersessions": "COALESCE(expired_at, valid_until) DESC, id DESC", "session": "created_at DESC, id DESC"}
_ENTITY_ORDER = "valid_from DESC, id DESC"
# An entity's facts: how many, how many active and private, and the newest; `now` is the parameter.
_FACT_TALLY = (
    f"SELECT entity_slug AS slug, count(*) AS facts, count(*) FILTER (WHERE {_ACTIVE}) AS active, "
    "count(*) FILTER (WHERE visibility = 'private') AS private, max(created_at) AS last_fact FROM facts"
)
# Every entity's slug, once: a live page's or a fact's (the source is both parameters).
_NAMES = (
    "SELECT slug FROM pages WHERE source_id = ? AND deleted_at IS NULL "
    "UNION SELECT entity_slug FROM facts WHERE source_id = ? AND entity_slug IS NOT NULL"
)
_ENTITY_NAMES = f"WITH names AS ({_NAMES}) "


def _given(*conditions: tuple[str, object]) -> tuple[str, list[object]]:
    """The conditions whose value was given (None and "" ask for no filter), ANDed, and their
    parameters: a condition's value fills each of its `?`."""
    where: list[str] = []
    args: list[object] = []
    for sql, value in conditions:
        if value is None or value == "":
            continue
        where.append(sql)
        args.extend([value] * sql.count("?"))
    return " AND ".join(where) or "TRUE", args


def _restated_by(db: Tx, source: str, entity: str, norm: str, visibility: str, fact_id: int, now: int) -> int | None:
    """Another active fact that says the same (`fact_norm`) about `entity` in `visibility`: its id, or None."""
    same = db.execute(
        "SELECT id FROM facts WHERE source_id = ? AND entity_slug = ? AND fact_norm = ? AND visibility = ? "
        f"AND id != ? AND {_ACTIVE} ORDER BY id LIMIT 1",
        (source, entity, norm, visibility, fact_id, now),
    ).fetchone()
    return None if same is None else int(same["id"])


class BrowseStore(Store):
    if TYPE_CHECKING:
        def brain_bytes(self) -> int:
            """What the brain occupies in storage: the composed brain's (sqlite.py, postgres.py)."""
            ...

    def entities(
        self,
        source: str,
        now: int,
        *,
        with_page: bool | None = None,
        type_: str | None = None,
        prefix: str | None = None,
    ) -> list[Row]:
        """Every entity with a live page or a fact, most recently touched first.

        A row: slug, title, type, visibility (of the page, None without one), has_page,
        facts (all), active, private (facts), last_touched (epoch ms).
        """
        where, args = _given(
            ("has_page = ?", None if with_page is None else int(with_page)),
            ("type = ?", type_),
            ("substr(slug, 1, length(?)) = ?", prefix),
        )
        return self.query(
            f"""
            WITH f AS ({_FACT_TALLY} WHERE source_id = ? AND entity_slug IS NOT NULL GROUP BY entity_slug),
            p AS (SELECT slug, title, type, visibility, updated_at FROM pages WHERE source_id = ? AND deleted_at IS NULL),
            e AS (
                SELECT p.slug, p.title, p.type, p.visibility, 1 AS has_page, coalesce(f.facts, 0) AS facts,
                       coalesce(f.active, 0) AS active, coalesce(f.private, 0) AS private,
                       {self.dialect.greatest("p.updated_at", "coalesce(f.last_fact, 0)")} AS last_touched
                FROM p LEFT JOIN f ON f.slug = p.slug
                UNION ALL
                SELECT f.slug, NULL, NULL, NULL, 0, f.facts, f.active, f.private, f.last_fact
                FROM f WHERE f.slug NOT IN (SELECT slug FROM p)
            )
            SELECT * FROM e WHERE {where} ORDER BY last_touched DESC, slug
            """,
            (now, source, source, *args),
        )

    def entity_window(self, source: str, now: int, *, search: str = "", offset: int = 0,
                      limit: int = 50) -> tuple[int, list[Row]]:
        """One page of every entity (a live page or a fact), by slug, and how many match in all.

        `search` matches a slug or a page title, case-insensitively. Only the window's entities
        are counted and joined, so a page of a 20K-entity brain costs what a page costs.
        """
        q = search.strip().lower()
        match = "TRUE"
        margs: tuple[str, ...] = ()
        if q:
            in_slug = self.dialect.contains("lower(slug)", "?")
            in_title = self.dialect.contains("lower(coalesce(title, ''))", "?")
            match = (f"({in_slug} OR slug IN (SELECT slug FROM pages WHERE source_id = ? "
                     f"AND deleted_at IS NULL AND {in_title}))")
            margs = (q, source, q)
        picked = self.query(
            f"{_ENTITY_NAMES} SELECT slug, count(*) OVER () AS total FROM names WHERE {match} ORDER BY slug LIMIT ? OFFSET ?",
            (source, source, *margs, limit, offset),
        )
        slugs = [r["slug"] for r in picked]
        if not slugs:
            total = self.aggregate(
                f"{_ENTITY_NAMES} SELECT count(*) FROM names WHERE {match}", (source, source, *margs)
            )[0] if offset else 0
            return total, []
        window, wargs = self.dialect.text_table("w", "slug", slugs)
        of_facts, fargs = self.dialect.any_of("entity_slug", slugs)
        of_pages, pargs = self.dialect.any_of("slug", slugs)
        rows = self.query(
            f"""
            WITH {window},
            f AS ({_FACT_TALLY} WHERE source_id = ? AND {of_facts} GROUP BY entity_slug),
            p AS (SELECT slug, title, type, visibility, updated_at FROM pages
                  WHERE source_id = ? AND deleted_at IS NULL AND {of_pages})
            SELECT w.slug, p.title, p.type, p.visibility, CASE WHEN p.slug IS NULL THEN 0 ELSE 1 END AS has_page,
                   coalesce(f.facts, 0) AS facts, coalesce(f.active, 0) AS active, coalesce(f.private, 0) AS private,
                   {self.dialect.greatest("coalesce(p.updated_at, 0)", "coalesce(f.last_fact, 0)")} AS last_touched
            FROM w LEFT JOIN p ON p.slug = w.slug LEFT JOIN f ON f.slug = w.slug ORDER BY w.slug
            """,
            (*wargs, now, source, *fargs, source, *pargs),
        )
        return picked[0]["total"], rows

    def fact_only_slugs_ending(self, source: str, slug: str) -> list[tuple[str, int]]:
        """Fact entities with no live page whose slug is a '/'-suffix of `slug` (alice-example for
        people/alice-example): facts filed before the page existed. (slug, fact count) pairs."""
        parts = slug.split("/")
        tails = ["/".join(parts[i:]) for i in range(1, len(parts))]
        if not tails:
            return []
        listed, args = self.dialect.any_of("entity_slug", tails)
        rows = self.query(
            f"SELECT entity_slug, count(*) FROM facts WHERE source_id = ? AND {listed} "
            "AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = facts.source_id AND p.slug = facts.entity_slug "
            "AND p.deleted_at IS NULL) GROUP BY entity_slug ORDER BY length(entity_slug) DESC",
            (source, *args),
        )
        return [(r[0], r[1]) for r in rows]

    def stats(self, source: str, now: int) -> dict:
        def one(sql: str) -> object:  # a count for the source, which fills each `?`
            return self.aggregate(sql, (source,) * sql.count("?"))[0]

        facts = self.aggregate(
            f"SELECT count(*), count(*) FILTER (WHERE {_ACTIVE}), "
            "count(*) FILTER (WHERE expired_at IS NOT NULL AND superseded_by IS NULL), "
            "count(*) FILTER (WHERE superseded_by IS NOT NULL), count(*) FILTER (WHERE visibility = 'private'), "
            "count(*) FILTER (WHERE expired_at IS NULL AND valid_until IS NOT NULL AND valid_until <= ?), "
            "max(created_at) FROM facts WHERE source_id = ?",
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
            "entities": one(f"SELECT count(*) FROM ({_NAMES}) e"),
            "links": one("SELECT count(*) FROM links WHERE source_id = ?"),
            "aliases": one("SELECT count(*) FROM aliases WHERE source_id = ?"),
            "timeline_entries": one("SELECT count(*) FROM timeline WHERE source_id = ?"),
            "chunks": one("SELECT count(*) FROM chunks WHERE source_id = ?"),
            "text_vectors": one("SELECT count(*) FROM text_vectors"),
            "fact_vectors": one("SELECT count(*) FROM fact_vectors"),
            "last_page_write": one("SELECT max(updated_at) FROM pages WHERE source_id = ?"),
            "last_fact_write": facts[6],
            "brain_bytes": self.brain_bytes(),
        }

    def backlinks(self, source: str, slug: str, limit: int) -> list[Row]:
        """Every link into `slug` from a live page (mentions too), with the linking page's title."""
        return self.query(
            "SELECT l.from_slug AS slug, p.title, p.visibility, l.link_type, l.link_source, l.context, l.created_at "
            "FROM links l JOIN pages p ON p.source_id = l.source_id AND p.slug = l.from_slug AND p.deleted_at IS NULL "
            "WHERE l.source_id = ? AND l.to_slug = ? ORDER BY l.created_at DESC, l.id DESC LIMIT ?",
            (source, slug, limit),
        )

    def timeline_entries(self, source: str, slug: str, limit: int) -> list[Row]:
        return self.query(
            "SELECT date, summary, detail, origin, created_at FROM timeline WHERE source_id = ? AND slug = ? "
            "ORDER BY date DESC, id DESC LIMIT ?",
            (source, slug, limit),
        )

    def _window_where(self, source: str, f: FactFilter, grep: str | None) -> tuple[str, list[object]]:
        where, args = self.fact_where(source, f)
        if grep:
            # recall's grep: a case-insensitive substring. lower() folds ASCII only on SQLite (like
            # most needles) and every letter on Postgres; the wire applies Python's lower() to the
            # returned page instead.
            where += f" AND {self.dialect.contains('lower(fact)', 'lower(?)')}"
            args.append(grep)
        return where, args

    def fact_count(self, source: str, f: FactFilter, grep: str | None = None) -> int:
        """How many facts recall's facts arm matches before its limit: the true total."""
        where, args = self._window_where(source, f, grep)
        return int(self.aggregate(f"SELECT count(*) FROM facts WHERE {where}", tuple(args))[0])

    def fact_window(self, source: str, f: FactFilter, offset: int, grep: str | None = None) -> list[Row]:
        """recall's facts arm from `offset` on, in the arm's order (the CLI's paging)."""
        where, args = self._window_where(source, f, grep)
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE {where} ORDER BY {_ARM_ORDER.get(f.arm, _ENTITY_ORDER)} LIMIT ? OFFSET ?",
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

    # -- the trusted caller's audited edits (fact_edits.py has their rules) ----------------------

    def restore_fact(self, source: str, fact_id: int, *, reason: str, actor: str, now: int) -> Row:
        """Bring a forgotten fact back (fact_edits.py says when it may), keeping the expiry it undoes
        in `fact_audit`; the fact as it now is. Raises FactEditRefused with nothing written."""
        with self.write() as db:
            row = db.execute(
                f"SELECT {FACT_COLS}, expiry_reason, fact_norm FROM facts WHERE id = ? AND source_id = ?", (fact_id, source)
            ).fetchone()
            page_deleted, restated_by = False, None
            if row is not None and row["entity_slug"] is not None:
                page = db.execute(
                    "SELECT deleted_at FROM pages WHERE source_id = ? AND slug = ?", (source, row["entity_slug"])
                ).fetchone()
                page_deleted = page is not None and page["deleted_at"] is not None
                restated_by = _restated_by(db, source, row["entity_slug"], row["fact_norm"], row["visibility"], fact_id, now)
            refused = restore_refusal(fact_id, row, now=now, page_deleted=page_deleted, restated_by=restated_by)
            if refused is not None:
                raise refused
            assert row is not None, "restore_refusal refuses a missing fact"
            db.execute("UPDATE facts SET expired_at = NULL, expiry_reason = NULL WHERE id = ?", (fact_id,))
            self._audit(db, fact_id, "restored", (row["expiry_reason"], row["expired_at"], None), reason, actor, now)
            return first(db.execute(f"SELECT {FACT_COLS}, expiry_reason FROM facts WHERE id = ?", (fact_id,)))

    def set_fact_visibility(self, source: str, fact_id: int, visibility: str, *, widen: bool, reason: str,
                            actor: str, now: int) -> bool:
        """Make one fact world or private, audited in `fact_audit`; False when it already was.
        Widening needs `widen=True`, and an active fact is not given a visibility in which an active
        fact already says the same (fact_edits.py). Raises FactEditRefused with nothing written."""
        with self.write() as db:
            row = db.execute(
                f"SELECT visibility, entity_slug, fact_norm, owner, {_ACTIVE} AS active FROM facts WHERE id = ? AND source_id = ?",
                (now, fact_id, source),
            ).fetchone()
            current = row["visibility"] if row is not None else None
            restated_by = None
            if row is not None and row["active"] and row["entity_slug"] is not None and current != visibility:
                restated_by = _restated_by(db, source, row["entity_slug"], row["fact_norm"], visibility, fact_id, now)
            person = people.current().person
            theirs = row is not None and not people.owns(
                int(row["owner"]), person if person is not None else self.session_person(), self.backend)
            refused = visibility_refusal(fact_id, current, visibility, widen=widen, restated_by=restated_by,
                                         owner=int(row["owner"]) if theirs and row is not None else None)
            if refused is not None:
                raise refused
            if current == visibility:
                return False
            db.execute("UPDATE facts SET visibility = ? WHERE id = ?", (visibility, fact_id))
            self._audit(db, fact_id, "visibility", (current, None, visibility), reason, actor, now)
            return True

    def _audit(self, db: Tx, fact_id: int, action: str, old: tuple[object, object, object], reason: str, actor: str,
               now: int) -> None:
        """One `fact_audit` row: (old value, when it was set, new value), who (`actor`, and the person), why."""
        db.execute(
            "INSERT INTO fact_audit (fact_id, action, old_value, old_at, new_value, reason, actor, at, by_person) "
            f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, {self.dialect.owner()})",
            (fact_id, action, *old, reason, actor, now, people.current().person),
        )

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
                    "INSERT INTO fact_moves (fact_id, from_slug, to_slug, reason, moved_at, by_person) "
                    f"VALUES (?, ?, ?, ?, ?, {self.dialect.owner()})",
                    (row["id"], from_slug, to_slug, reason, now, people.current().person),
                )
                status = "moved"
                if row["expired_at"] is None:
                    dup = _restated_by(db, source, to_slug, row["fact_norm"], row["visibility"], row["id"], now)
                    if dup is not None:
                        db.execute(
                            "UPDATE facts SET expired_at = ?, expiry_reason = ? WHERE id = ?",
                            (now, f"duplicate of fact #{dup} after moving to {to_slug}", row["id"]),
                        )
                        status = "duplicate"
                out.append((row["id"], status))
        return out

    # -- the inspector's live feed (`memverbs ui`) ----------------------------------------------

    def fact_changes(self, source: str, after: int, *, entity: str | None = None, kind: str | None = None,
                     visibility: str | None = None, provenance: str | None = None, until: int | None = None,
                     limit: int = 200) -> list[Row]:
        """Facts remembered, expired, restored or made world/private at or after `after` (epoch ms),
        newest change first.

        `changed_at` is the latest of those moments, so a fact forgotten a minute ago comes back
        to the top of the feed with its new state. The newest `limit` by that moment are among
        the newest `limit` by each one, so each is read on its own (down its own index).
        """
        where, args = _given(
            ("source_id = ?", source),
            ("entity_slug = ?", entity),
            ("kind = ?", kind),
            ("visibility = ?", visibility),
            (self.dialect.contains("lower(coalesce(provenance, ''))", "lower(?)"), provenance),
            ("created_at <= ?", until),
        )
        latest = self.dialect.greatest(
            "created_at", "coalesce(expired_at, 0)",
            "coalesce((SELECT max(at) FROM fact_audit a WHERE a.fact_id = facts.id), 0)",
        )
        cols = f"{FACT_COLS}, expiry_reason, {latest} AS changed_at"
        rows: dict[int, Row] = {}
        for col in ("created_at", "expired_at"):
            for r in self.query(
                f"SELECT {cols} FROM facts WHERE {where} AND {col} >= ? ORDER BY {col} DESC, id DESC LIMIT ?",
                (*args, after, limit),
            ):
                rows[r["id"]] = r
        # Restores and visibility changes: their moment is in `fact_audit` (few rows: people's edits).
        for r in self.query(
            f"SELECT {cols} FROM facts "
            "JOIN (SELECT fact_id, max(at) AS edited FROM fact_audit WHERE at >= ? GROUP BY fact_id) e "
            f"ON e.fact_id = facts.id WHERE {where} ORDER BY e.edited DESC, id DESC LIMIT ?",
            (after, *args, limit),
        ):
            rows[r["id"]] = r
        return sorted(rows.values(), key=lambda r: (r["changed_at"], r["id"]), reverse=True)[:limit]

    def page_changes(self, source: str, after: int, *, entity: str | None = None, visibility: str | None = None,
                     until: int | None = None, limit: int = 200) -> list[Row]:
        """Pages written or deleted at or after `after`, newest first, private ones included."""
        where, args = _given(
            ("source_id = ?", source), ("slug = ?", entity), ("visibility = ?", visibility), ("updated_at <= ?", until)
        )
        latest = self.dialect.greatest("updated_at", "coalesce(deleted_at, 0)")
        rows: dict[str, Row] = {}
        for branch, col in (("deleted_at IS NULL AND updated_at >= ?", "updated_at"), ("deleted_at >= ?", "deleted_at")):
            for r in self.query(
                f"SELECT slug, title, type, visibility, updated_at, deleted_at, {latest} AS changed_at FROM pages "
                f"WHERE {where} AND {branch} ORDER BY {col} DESC LIMIT ?",
                (*args, after, limit),
            ):
                rows[r["slug"]] = r
        return sorted(rows.values(), key=lambda r: (r["changed_at"], r["slug"]), reverse=True)[:limit]
