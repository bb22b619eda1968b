"""Whose a table's rows are, and what a backup does with them: the words the declaration is written in.

Every table of the brain is declared once, under the store concept that keeps it
(server/brain/stores.py), with one of the kinds below and its backup: kept (`Kept`), left out and
why (`LeftOut`), or written again from the other rows (`Rebuilt`). What follows from a kind is
derived, never restated:

* **Postgres's row policies** (server/brain/postgres_policies.py, `policies_for`): who reads,
  adds, changes and removes each row on a team brain, and whether a teammate's role is granted
  the table at all (`grant`);
* **what one person's backup holds of it** (server/sync/backup_view.py): the world's rows and
  their own, cut as memverbs cuts them everywhere else;
* **what `export --full` and `migrate` copy**: every kept table (a left-out one only by `migrate`,
  a rebuilt one by neither: it is written again from the rows copied).

The kinds name how a row finds what decides it: its own `visibility` and `owner` (a page, a
fact), the page or fact it belongs to, its synced folder, its person. SQLite is one person's file
(docs/postgres.md, "People and privacy"): it has no policies, and only backups read the kinds there.
"""

from __future__ import annotations

from memverbs.server.record import Frozen

RW, READ, NONE = "read and write", "read", "none"  # what a teammate's Postgres role is granted


class Whose(Frozen):
    """A kind of rows: `kind` names it; `page` how a row names its page (`slug:<column>`, matched with
    its source, or `id:<column>`), for the kinds that show with a page; `grant` a teammate's."""

    __slots__ = ("grant", "kind", "page")
    kind: str
    page: str
    grant: str

    def __init__(self, kind: str, page: str = "", grant: str = RW) -> None:
        super().__init__(kind=kind, page=page, grant=grant)

    def page_match(self, table: str, alias: str = "p") -> str:
        """SQL matching the row of `table` with its page (`alias`)."""
        how, _, column = self.page.partition(":")
        if how == "slug":
            return f"{alias}.source_id = {table}.source_id AND {alias}.slug = {table}.{column}"
        return f"{alias}.id = {table}.{column}"


# A page and a fact are the world's or their owner's alone (`visibility`, `owner`); only the owner
# changes either, and only the owner deletes it. A page's text is also read by the sync functions.
PAGE = Whose("page")
FACT = Whose("fact")
# A page's replaced texts (`page_versions`): shown with the page, a private one to its owner;
# written by whoever rewrites the page, never changed, pruned past the newest kept.
VERSIONS = Whose("versions", page="id:page_id")
# Shown and written with the page a row belongs to, whatever its own content.
ALIAS = Whose("with_page", page="slug:slug")
CHUNK = Whose("with_page", page="id:page_id")


def page_row(column: str) -> Whose:
    """A link or timeline row: shown with its page, a row the page's private facts-fence rows
    declare (`private_row`) to the page's owner alone; always written in the page's owner's name."""
    return Whose("page_row", page=f"slug:{column}")


# Shown with the fact a row belongs to (the fact's own rule decides).
WITH_FACT = Whose("with_fact")
# A fact's trail (its moves, its audit): shown with the fact, written in its writer's name, and
# never changed or removed: it only grows.
TRAIL = Whose("trail")
# A synced folder, and the rows of its files, conflicts and failures: its person's alone. A synced
# file names no page its person cannot see.
FOLDER = Whose("folder")
FOLDER_FILE = Whose("folder_file")
OF_FOLDER = Whose("of_folder")
# A credential (an access token): its person's, and the brain owner's, who checks any bearer.
CREDENTIAL = Whose("credential")
# The name index: a name shows with a page, or a fact about the entity, the reader may see.
NAMES = Whose("names", page="slug:slug")
# The team's: every person reads and writes them (cursors, projects, vector spaces and vectors).
TEAM = Whose("team")
# Every person reads them; only the owner writes (the people).
PEOPLE = Whose("people", grant=READ)
# The owner's server's alone (OAuth): no teammate's role is granted them.
OWNER = Whose("owner", grant=NONE)


class Kept(Frozen):
    """A table a backup holds: what its person may read of it (every row, with `--all-people`)."""

    __slots__ = ("whose",)
    whose: Whose

    def __init__(self, whose: Whose) -> None:
        super().__init__(whose=whose)


class LeftOut(Frozen):
    """A table no backup holds, and why (the manifest says it)."""

    __slots__ = ("whose", "why")
    whose: Whose
    why: str

    def __init__(self, whose: Whose, why: str) -> None:
        super().__init__(whose=whose, why=why)


class Rebuilt(Frozen):
    """A table the brain derives from its other rows: never copied, written again after a copy or a
    restore (a copy would collide with the rows the copied rows' triggers already wrote)."""

    __slots__ = ("whose",)
    whose: Whose

    def __init__(self, whose: Whose) -> None:
        super().__init__(whose=whose)


Declared = Kept | LeftOut | Rebuilt

# Why the tables left out of a backup are (the manifest's words).
CREDENTIALS = "credentials never go into a folder of notes: mint new ones (`memverbs auth create`, the OAuth consent)"
EMBEDDINGS = "embeddings: `memverbs reindex` computes them again"
SYNC_STATE = "this machine's synced folders: `memverbs sync` them again"
CURSORS = "where each agent last read: agents start afresh"
