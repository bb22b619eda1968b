"""Projects in the Postgres brain: the same registry and reads as sqlite_projects.py documents."""

from __future__ import annotations

from memverbs.server.brain.postgres_base import PostgresBase, first
from memverbs.server.brain.sqlite_facts import FACT_COLS
from memverbs.server.brain.sqlite_projects import PROJECT_SCAN
from memverbs.server.projects import free_slug

_ACTIVE_WORLD = "expired_at IS NULL AND (valid_until IS NULL OR valid_until > %s) AND (NOT %s OR visibility = 'world')"


class ProjectStore(PostgresBase):
    def project_row(self, source: str, key: str) -> object | None:
        return self.one("SELECT key, slug, name, root FROM projects WHERE source_id = %s AND key = %s", (source, key))

    def slug_taken(self, source: str, slug: str) -> bool:
        return self.one("SELECT 1 FROM projects WHERE source_id = %s AND slug = %s", (source, slug)) is not None

    def register_project(self, source: str, key: str, name: str, slug: str, root: str, now: int) -> str:
        with self.write() as db:
            row = db.execute("SELECT slug, root FROM projects WHERE source_id = %s AND key = %s", (source, key)).fetchone()
            if row is not None:
                if row["root"] != root:
                    db.execute("UPDATE projects SET root = %s, updated_at = %s WHERE source_id = %s AND key = %s",
                               (root, now, source, key))
                return str(row["slug"])
            taken = {r["slug"] for r in db.execute(
                "SELECT slug FROM projects WHERE source_id = %s AND (slug = %s OR left(slug, %s) = %s)",
                (source, slug, len(slug) + 1, slug + "-"),
            )}
            chosen = free_slug(slug, taken)
            first(db.execute(
                "INSERT INTO projects (source_id, key, slug, name, root, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING slug",
                (source, key, chosen, name, root, now, now),
            ))
            return chosen

    def projects(self, source: str, now: int) -> list:
        return self.query(
            "SELECT p.slug, p.name, p.key, p.root, p.created_at, p.updated_at, "
            "(SELECT count(*) FROM facts f WHERE f.source_id = p.source_id AND f.project = p.slug AND f.expired_at IS NULL "
            " AND (f.valid_until IS NULL OR f.valid_until > %s)) AS facts, "
            "(SELECT max(created_at) FROM facts f WHERE f.source_id = p.source_id AND f.project = p.slug) AS last_fact "
            "FROM projects p WHERE p.source_id = %s "
            "ORDER BY coalesce((SELECT max(created_at) FROM facts f WHERE f.source_id = p.source_id AND f.project = p.slug), "
            "p.updated_at) DESC, p.slug",
            (now, source),
        )

    def project_facts(self, source: str, project: str, *, world_only: bool, now: int, limit: int) -> list:
        return self.query(
            f"SELECT {FACT_COLS} FROM facts WHERE source_id = %s AND project = %s AND {_ACTIVE_WORLD} "
            "ORDER BY valid_from DESC, id DESC LIMIT %s",
            (source, project, now, world_only, limit),
        )

    def project_entity_slugs(self, source: str, project: str, *, limit: int) -> list[str]:
        rows = self.query(
            "SELECT entity_slug, count(*) AS n, max(valid_from) AS last FROM ("
            " SELECT entity_slug, valid_from FROM facts WHERE source_id = %s AND project = %s"
            " AND entity_slug IS NOT NULL AND entity_slug <> %s AND visibility = 'world' AND expired_at IS NULL"
            " ORDER BY valid_from DESC LIMIT %s) recent GROUP BY entity_slug ORDER BY n DESC, last DESC, entity_slug LIMIT %s",
            (source, project, project, PROJECT_SCAN, limit),
        )
        return [r["entity_slug"] for r in rows]

    def project_entities(self, source: str, project: str) -> set[str]:
        """Every entity a fact remembered in `project` is about, and the project's own."""
        rows = self.query(
            "SELECT DISTINCT entity_slug FROM facts WHERE source_id = %s AND project = %s AND entity_slug IS NOT NULL",
            (source, project),
        )
        return {r[0] for r in rows} | {project}
