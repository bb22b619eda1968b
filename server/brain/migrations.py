"""Schema migrations: one ordered list of named steps, each with what it runs on SQLite and on Postgres.

A brain records the steps applied to it in `_migrations` (name, applied_at), the same table with
the same names on both backends, so `doctor` and `migrate` speak of one schema history. Each
backend's runner (`sqlite_migrate.py`, `postgres_migrate.py`) applies a pending step in one
transaction together with its record row, inserted first, so a second process racing to apply the
same step fails on the record's key (or waits on the migrate lock) instead of applying it twice.
A brain that records a step this code does not know was written by a newer memverbs: it is refused
(never "downgraded") with the fix, so nothing is lost.

A step's work on a dialect is a sequence of SQL scripts and Python functions, run in order in the
step's transaction: SQL in `schema.py`'s column-type vocabulary (the tables both backends share
are written once there; what only one has is in `sqlite_schema.py` or `postgres_schema.py`), and a
function for data SQL cannot compute, given the backend's connection (sqlite3's, or the Postgres
brain's, which reads the same `?` statements and has the same `executemany`). On Postgres a step
names the tables it puts under row-level security (`Secure`): their policies are derived from the
declaration of what each table is (server/brain/stores.py), never written here.
"""

from __future__ import annotations

from memverbs.server.errors import BrainError
from memverbs.server.names import restatement_key, title_key
from memverbs.server.record import Frozen

# The list of steps is built at its first use (`steps()`, or `MIGRATIONS` from outside), with the schema
# modules it is written in: opening a current SQLite brain (every hook's open) asks only `STEP_COUNT`
# and `LAST_STEP` (sqlite_migrate.current), so this module stays as light as the records it defines.
TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Any

    MIGRATIONS: tuple[Step, ...]


class Secure(Frozen):
    """On Postgres, the named tables put under the row-level security their declared kind derives
    (server/brain/stores.py says the kind, postgres_policies.policies_for its policies), written by
    the runner when the step runs. `teammates`: a table made after `0023_whole_brain` also gets the
    owner's whole-brain policy, and is granted to the teammates' roles already mapped as its kind
    grants (`people add` grants it to the next ones)."""

    __slots__ = ("tables", "teammates")
    tables: tuple[str, ...]
    teammates: bool

    def __init__(self, *tables: str, teammates: bool = False) -> None:
        super().__init__(tables=tables, teammates=teammates)



if TYPE_CHECKING:
    Work = str | Callable[[Any], None] | Secure  # SQL (a script of statements), a function of the connection, policies


class Step(Frozen):
    """A named step: what it runs on SQLite and on Postgres, in order; the same work on both unless told."""

    __slots__ = ("name", "postgres", "sqlite")
    name: str
    sqlite: tuple[Work, ...]
    postgres: tuple[Work, ...]

    def __init__(self, name: str, *both: Work, sqlite: tuple[Work, ...] | None = None,
                 postgres: tuple[Work, ...] | None = None) -> None:
        super().__init__(name=name, sqlite=both if sqlite is None else sqlite,
                         postgres=both if postgres is None else postgres)

    def work(self, dialect: str) -> list[Work]:
        """The step on `dialect` ("sqlite" or "postgres"): its SQL spelled in that dialect's column types."""
        assert dialect == "postgres" or not any(isinstance(part, Secure) for part in self.sqlite), "SQLite has no row policies"
        from memverbs.server.brain import postgres_schema, sqlite_schema  # noqa: PLC0415 - see the imports

        types = (postgres_schema if dialect == "postgres" else sqlite_schema).COLUMN_TYPES
        return [part.format_map(types) if isinstance(part, str) else part for part in getattr(self, dialect)]


def fill_title_keys(conn: Any, batch: int = 1000) -> None:
    """The title key (names.title_key) of every page written before the column existed."""
    rows = conn.execute("SELECT id, title FROM pages WHERE title IS NOT NULL ORDER BY id").fetchall()
    for at in range(0, len(rows), batch):
        conn.executemany("UPDATE pages SET title_key = ? WHERE id = ?", [(title_key(r[1]), r[0]) for r in rows[at : at + batch]])


def fill_fact_terms(conn: Any) -> None:
    """Every fact's index terms (server/terms.py: folded, stemmed, CJK and Thai runs cut into
    character pairs), and its dedup key, which drops final punctuation now (names.restatement_key)."""
    from memverbs.server.terms import index_text  # noqa: PLC0415 - loaded only when the step runs

    rows = conn.execute("SELECT id, fact FROM facts").fetchall()
    conn.executemany("UPDATE facts SET search_terms = ?, fact_norm = ? WHERE id = ?",
                     [(index_text(r[1]), restatement_key(r[1]), r[0]) for r in rows])


def private_behind_a_blank_line(conn: Any) -> None:
    """Pages whose frontmatter came after a byte-order mark or a blank line were read as having none,
    so a `visibility: private` there was lost and the page stored world-visible (markdown.FRONTMATTER
    reads them now): each is made private, as its writer said. Nothing else of them changes until
    they are written again."""
    from memverbs.server.pages.markdown import PageFormatError, parse_page  # noqa: PLC0415

    starts = ("\ufeff", "\n", "\r", " ", "\t")
    rows = conn.execute("SELECT id, coalesce(markdown, body) FROM pages WHERE visibility = 'world' AND "
                        f"substr(coalesce(markdown, body), 1, 1) IN ({', '.join('?' for _ in starts)})", starts).fetchall()
    meant: list[tuple[int]] = []
    for page_id, text in rows:
        try:
            if parse_page(text).visibility == "private":
                meant.append((page_id,))
        except PageFormatError:
            continue  # it cannot be read now either: a write of it will be refused, it stays as it is
    if meant:
        conn.executemany("UPDATE pages SET visibility = 'private' WHERE id = ?", meant)

def fill_entity_names(conn: Any) -> None:
    """The name index (server/name_index.py) of every page already in the brain."""
    from memverbs.server.brain.names_store import rebuild_all  # noqa: PLC0415 - loaded only when the step runs

    rebuild_all(conn)


# Steps are appended, never renamed. With each, these two follow: how many steps the list holds and the
# last one's name. A brain that records exactly that many, the last among them this one, is current
# (names are numbered, and a newer memverbs only appends): sqlite_migrate.current answers that with one
# read, without building the list. A stale pair only sends every open the long way round, through the
# list (tests/server/brain/test_migrations.py holds the pair equal to it).
STEP_COUNT = 25
LAST_STEP = "0025_entity_names"


def steps() -> tuple[Step, ...]:
    """The list, built once (a test may put another in its place: `MIGRATIONS` is what is used)."""
    built = globals().get("MIGRATIONS")
    if built is None:
        built = globals()["MIGRATIONS"] = _build()
    return built


def __getattr__(name: str) -> object:  # `migrations.MIGRATIONS` from outside builds it on first use
    if name == "MIGRATIONS":
        return steps()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _build() -> tuple[Step, ...]:
    from memverbs.server.brain import postgres_policies as policies  # noqa: PLC0415 - see the imports
    from memverbs.server.brain import postgres_schema as pg  # noqa: PLC0415
    from memverbs.server.brain import schema  # noqa: PLC0415
    from memverbs.server.brain import sqlite_schema as sq  # noqa: PLC0415

    return (
        Step("0001_core_tables", sqlite=(schema.CORE_TABLES,), postgres=(schema.CORE_TABLES, pg.LINKS_FROM)),
        Step("0002_keyword_index", sqlite=(sq.KEYWORD_INDEX,), postgres=(pg.KEYWORD_INDEX,)),
        Step("0003_access_tokens", schema.ACCESS_TOKENS),
        Step("0004_chunks_and_vectors", schema.VECTORS),
        Step("0005_fact_moves", schema.FACT_MOVES),
        Step("0006_page_markdown", schema.PAGE_MARKDOWN),
        Step("0007_plan_indexes", schema.PLAN_INDEXES),
        Step("0008_markdown_sync_state", schema.MARKDOWN_SYNC_STATE),
        Step("0009_change_feed_indexes", schema.CHANGE_FEED),
        Step("0010_fact_audit", schema.FACT_AUDIT),
        Step("0011_private_rows", schema.PRIVATE_ROWS),
        Step("0012_projects", schema.PROJECTS),
        Step("0013_oauth", schema.OAUTH),
        Step("0014_title_keys", schema.TITLE_KEYS, fill_title_keys),
        Step("0015_fact_terms", sqlite=(sq.FACT_TERMS, fill_fact_terms, sq.FACT_TERMS_INDEX),
             postgres=(pg.FACT_TERMS, fill_fact_terms, pg.FACT_TERMS_INDEX)),
        # Postgres has no twin of SQLite's trigram index: a word of a script written without spaces is found
        # by a scan of the source's pages (strpos), the same answers without an extension (pg_trgm).
        Step("0016_page_trigrams", sqlite=(sq.PAGE_TRIGRAMS,), postgres=()),
        Step("0017_page_history", schema.PAGE_HISTORY),
        Step("0018_people", sqlite=(schema.PEOPLE,), postgres=(schema.PEOPLE, pg.ROW_SECURITY)),
        Step("0019_folder_identity", sqlite=(sq.FOLDER_IDENTITY, schema.FOLDER_IDENTITY),
             postgres=(pg.FOLDER_IDENTITY, schema.FOLDER_IDENTITY)),
        # FTS5 keeps no pending list and its own totals: only Postgres's GIN index is told to take new
        # facts at once, and only Postgres keeps BM25's corpus totals in a table.
        Step("0020_fact_ranking", sqlite=(), postgres=(pg.FACT_INDEX_DIRECT, pg.FACT_TOTALS)),
        Step("0021_team_privacy", sqlite=(schema.TEAM_PRIVACY, schema.FOLDER_OWNERS),
             postgres=(schema.TEAM_PRIVACY, policies.FOLDER_OWNERS, policies.FUNCTIONS + policies.DEFAULTS + policies.SYNC_CLAIMS,
                       Secure("pages", "facts", "links", "timeline", "page_versions", "aliases", "chunks", "fact_vectors",
                              "fact_audit", "fact_moves", "sync_folders", "sync_files", "sync_conflicts", "sync_failures",
                              "access_tokens"),
                       policies.GUARDS)),
        # The world view: what an untrusted caller's keyword ranking reads (brain/page_search.py), and the
        # privacy a frontmatter behind a blank line declared.
        Step("0022_world_view", sqlite=(sq.WORLD_INDEX, private_behind_a_blank_line),
             postgres=(pg.WORLD_SEARCH, "ALTER TABLE pages NO FORCE ROW LEVEL SECURITY",
                       # The guard (0021) lets only a page's owner change its visibility; this is the writer's
                       # own word, read again, so the step is not a person's change of someone else's page.
                       "ALTER TABLE pages DISABLE TRIGGER guard", private_behind_a_blank_line,
                       "ALTER TABLE pages ENABLE TRIGGER guard", "ALTER TABLE pages FORCE ROW LEVEL SECURITY")),
        # SQLite's file's user reads every row already: only Postgres's owner needs a way to the whole brain.
        Step("0023_whole_brain", sqlite=(), postgres=(pg.WHOLE_BRAIN,)),
        Step("0024_project_statements", schema.PROJECT_STATEMENTS),
        Step("0025_entity_names", sqlite=(schema.ENTITY_NAMES, sq.ENTITY_NAMES_FROM_FACTS, fill_entity_names),
             postgres=(schema.ENTITY_NAMES, Secure("entity_names", teammates=True), pg.ENTITY_NAMES_FROM_FACTS,
                       fill_entity_names)),
    )


# -- the rules both runners keep ---------------------------------------------------------------


def pending(done: Collection[str]) -> list[Step]:
    """The steps not yet applied to a brain that records `done`, in order."""
    return [step for step in steps() if step.name not in done]


def unknown(done: Collection[str]) -> list[str]:
    """Steps recorded in the brain that this code does not know: a newer memverbs wrote them."""
    known = {step.name for step in steps()}
    return sorted(name for name in done if name not in known)


def check_not_future(done: Collection[str], where: object) -> None:
    newer = unknown(done)
    if newer:
        raise BrainError(
            f"brain {where} has schema steps this memverbs does not know ({', '.join(newer)}): "
            "it was written by a newer memverbs",
            "Upgrade memverbs (pip install -U memverbs) to use this brain; nothing in it was changed.",
        )
