"""Projects, on either backend: the registry (identity → slug, once and for good) and the project reads.

A project's identity is its key (server/projects.py: the normalised remote URL, or `path:<root>`);
the registry gives each key a slug the first time a fact is remembered in it, and never another.
Two projects with the same name get `projects/<name>` and `projects/<name>-2`, in order of arrival.
"""

from __future__ import annotations

from memverbs.server.brain.facts_store import FACT_COLS
from memverbs.server.brain.store import Store

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

_ACTIVE_WORLD = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?) AND (NOT ? OR visibility = 'world')"
PROJECT_SCAN = 500  # the newest facts of a project its most-linked entities are counted over


def free_slug(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`, … the first not in `taken`."""
    candidate, n = wanted, 1
    while candidate in taken:
        n += 1
        candidate = f"{wanted}-{n}"
    return candidate


class ProjectStore(Store):
    def project_row(self, source: str, key: str) -> Row | None:
        return self.one("SELECT key, slug, name, root FROM projects WHERE source_id = ? AND key = ?", (source, key))

    def slug_taken(self, source: str, slug: str) -> bool:
        return self.one("SELECT 1 FROM projects WHERE source_id = ? AND slug = ?", (source, slug)) is not None

    def register_project(self, source: str, key: str, name: str, slug: str, root: str, now: int) -> str:
        """The key's slug: its registered one (its root refreshed), else `slug` or the first free suffix."""
        with self.write() as db:
            row = db.execute("SELECT slug, root FROM projects WHERE source_id = ? AND key = ?", (source, key)).fetchone()
            if row is not None:
                if row["root"] != root:
                    db.execute("UPDATE projects SET root = ?, updated_at = ? WHERE source_id = ? AND key = ?",
                               (root, now, source, key))
                return str(row["slug"])
            taken = {r[0] for r in db.execute(
                "SELECT slug FROM projects WHERE source_id = ? AND (slug = ? OR substr(slug, 1, ?) = ?)",
                (source, slug, len(slug) + 1, slug + "-"),
            )}
            chosen = free_slug(slug, taken)
            db.execute(
                "INSERT INTO projects (source_id, key, slug, name, root, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (source, key, chosen, name, root, now, now),
            )
            return chosen

    def projects(self, source: str, now: int) -> list[Row]:
        """Every registered project with its active facts (all visibilities) and when it last learned one."""
        # Ordered outside the row's own SELECT: Postgres reads an output column's name in ORDER BY
        # only as the whole term, not inside coalesce().
        return self.query(
            "SELECT * FROM (SELECT p.slug, p.name, p.key, p.root, p.created_at, p.updated_at, "
            "(SELECT count(*) FROM facts f WHERE f.source_id = p.source_id AND f.project = p.slug AND f.expired_at IS NULL "
            " AND (f.valid_until IS NULL OR f.valid_until > ?)) AS facts, "
            "(SELECT max(created_at) FROM facts f WHERE f.source_id = p.source_id AND f.project = p.slug) AS last_fact "
            "FROM projects p WHERE p.source_id = ?) listed ORDER BY coalesce(last_fact, updated_at) DESC, slug",
            (now, source),
        )

    def project_facts(self, source: str, project: str, *, world_only: bool, now: int, limit: int) -> list[Row]:
        """Active facts remembered in `project`, newest event first."""
        return self.query(
            f"SELECT {FACT_COLS} FROM {self.dialect.facts_by_project} WHERE source_id = ? AND project = ? AND {_ACTIVE_WORLD} "
            "ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, project, now, world_only, limit),
        )

    def project_statements(self, source: str, project: str, *, world_only: bool, now: int, limit: int) -> list[Row]:
        """Active facts remembered in `project` that are not events (what was said and decided there), newest
        first, however many events (captured commits) came since: a partial index holds them alone."""
        return self.query(
            f"SELECT {FACT_COLS} FROM {self.dialect.statements_by_project} WHERE source_id = ? AND project = ? "
            f"AND kind <> 'event' AND {_ACTIVE_WORLD} ORDER BY valid_from DESC, id DESC LIMIT ?",
            (source, project, now, world_only, limit),
        )

    def project_entity_slugs(self, source: str, project: str, *, limit: int) -> list[str]:
        """The entities most world-visible facts remembered in `project` are about (its newest
        PROJECT_SCAN), most first; the project's own entity left out."""
        rows = self.query(
            "SELECT entity_slug, count(*) AS n, max(valid_from) AS last FROM ("
            f" SELECT entity_slug, valid_from FROM {self.dialect.facts_by_project} WHERE source_id = ? AND project = ?"
            " AND entity_slug IS NOT NULL AND entity_slug <> ? AND visibility = 'world' AND expired_at IS NULL"
            " ORDER BY valid_from DESC LIMIT ?) recent GROUP BY entity_slug ORDER BY n DESC, last DESC, entity_slug LIMIT ?",
            (source, project, project, PROJECT_SCAN, limit),
        )
        return [r[0] for r in rows]

    def project_entities(self, source: str, project: str) -> set[str]:
        """Every entity a fact remembered in `project` is about, and the project's own."""
        rows = self.query(
            "SELECT DISTINCT entity_slug FROM facts WHERE source_id = ? AND project = ? AND entity_slug IS NOT NULL",
            (source, project),
        )
        return {r[0] for r in rows} | {project}
