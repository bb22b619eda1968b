"""The brain's store concepts, declared once: each concept's store, the tables it keeps, and whose
their rows are.

A table's columns, key and references are its schema step's SQL (read back by tables.py); what a
table *is* is said here, once, in server/brain/rows.py's words: whose its rows are, and what a
backup does with it. Everything else is derived from the two:

* `migrate` (transfer.py) copies every table the steps create but a rebuilt one, column for column;
* `export --full` and `import` (server/sync/backup*.py) hold the kept tables, each cut for one
  person's backup as its kind says (backup_view.py), and name why the others are left out;
* Postgres secures a table with the row policies its kind derives (postgres_policies.policies_for,
  written by the step that creates it: migrations.Secure) and grants a teammate's role what the
  kind grants (postgres.py); its size counts every declared table.

A table the steps create and no concept declares, or one a concept declares and no step creates,
is refused (`check`, run by `copied` before any row is copied); tests/server/brain/test_stores.py
also holds every table whose kind has policies to a step's `Secure`, and a live Postgres brain to
them. docs/architecture.md, "Add a storage concept", is the recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from memverbs.server.brain import tables
from memverbs.server.brain.browse_store import BrowseStore
from memverbs.server.brain.cursors_store import CursorStore
from memverbs.server.brain.facts_store import FactStore
from memverbs.server.brain.names_store import NameStore
from memverbs.server.brain.oauth_store import OAuthStore
from memverbs.server.brain.pages_store import PageStore
from memverbs.server.brain.people_store import PeopleStore
from memverbs.server.brain.projects_store import ProjectStore
from memverbs.server.brain.rows import (
    ALIAS,
    CHUNK,
    CREDENTIAL,
    CREDENTIALS,
    CURSORS,
    EMBEDDINGS,
    FACT,
    FOLDER,
    FOLDER_FILE,
    NAMES,
    OF_FOLDER,
    OWNER,
    PAGE,
    PEOPLE,
    SYNC_STATE,
    TEAM,
    TRAIL,
    VERSIONS,
    WITH_FACT,
    Declared,
    Kept,
    LeftOut,
    Rebuilt,
    page_row,
)
from memverbs.server.brain.sync_store import SyncStore
from memverbs.server.brain.tokens_store import TokenStore
from memverbs.server.brain.vectors_store import VectorStore
from memverbs.server.errors import BrainError

if TYPE_CHECKING:
    from memverbs.server.brain.tables import Table

S = TypeVar("S")


class Concept(Generic[S]):
    """One store concept: its store (written once for both backends) and the tables it keeps."""

    def __init__(self, store: type[S], **tables: Declared) -> None:
        self.store = store
        self.tables = tables
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def of(self, brain: object) -> S:
        """This concept's store on `brain`, typed as the store alone: the brain itself while the
        concept is one of the brain's bases (the concepts below, for now), else the store built on
        the brain (`store(brain)`: a concept added as docs/architecture.md's recipe says, which
        reads and writes through the brain's `Store` members and touches no backend class)."""
        if isinstance(brain, self.store):
            return brain
        return cast("Callable[[object], S]", self.store)(brain)


class Stores:
    """Every store concept of a brain, named as the brain reaches it."""

    pages = Concept(PageStore, pages=Kept(PAGE), aliases=Kept(ALIAS), links=Kept(page_row("from_slug")),
                    timeline=Kept(page_row("slug")), page_versions=Kept(VERSIONS))
    names = Concept(NameStore, entity_names=Rebuilt(NAMES))
    facts = Concept(FactStore, facts=Kept(FACT))
    browse = Concept(BrowseStore, fact_moves=Kept(TRAIL), fact_audit=Kept(TRAIL))
    projects = Concept(ProjectStore, projects=Kept(TEAM))
    people = Concept(PeopleStore, people=Kept(PEOPLE))
    tokens = Concept(TokenStore, access_tokens=LeftOut(CREDENTIAL, CREDENTIALS))
    oauth = Concept(OAuthStore, oauth_clients=LeftOut(OWNER, CREDENTIALS), oauth_tokens=LeftOut(OWNER, CREDENTIALS),
                    oauth_owner_secrets=LeftOut(OWNER, CREDENTIALS))
    cursors = Concept(CursorStore, session_cursors=LeftOut(TEAM, CURSORS))
    vectors = Concept(VectorStore, vector_spaces=LeftOut(TEAM, EMBEDDINGS), chunks=Kept(CHUNK),
                      text_vectors=LeftOut(TEAM, EMBEDDINGS), fact_vectors=LeftOut(WITH_FACT, EMBEDDINGS))
    sync = Concept(SyncStore, sync_folders=LeftOut(FOLDER, SYNC_STATE), sync_files=LeftOut(FOLDER_FILE, SYNC_STATE),
                   sync_conflicts=LeftOut(OF_FOLDER, SYNC_STATE), sync_failures=LeftOut(OF_FOLDER, SYNC_STATE))


def concepts() -> tuple[Concept, ...]:
    return tuple(c for c in vars(Stores).values() if isinstance(c, Concept))


def declared_tables() -> dict[str, Declared]:
    """Every table a concept keeps, with what it is, in the order the concepts declare them (a
    table is one concept's: declared twice, it is refused)."""
    out: dict[str, Declared] = {}
    for concept in concepts():
        for name, declared in concept.tables.items():
            if name in out:
                raise BrainError(f"the table {name} is declared twice (again by the store concept {concept.name})",
                                 "Declare each table once, under the concept whose store keeps it (server/brain/stores.py).")
            out[name] = declared
    return out


def kept() -> frozenset[str]:
    return frozenset(name for name, declared in declared_tables().items() if isinstance(declared, Kept))


def rebuilt() -> frozenset[str]:
    return frozenset(name for name, declared in declared_tables().items() if isinstance(declared, Rebuilt))


def left_out() -> dict[str, str]:
    """The tables no backup holds, and why."""
    return {name: declared.why for name, declared in declared_tables().items() if isinstance(declared, LeftOut)}


def copied() -> tuple[Table, ...]:
    """The tables whose rows are copied (`migrate`, backups and their restores), in an order that
    satisfies their foreign keys: every table the steps create but a rebuilt one, once the steps and
    this declaration agree (`check`)."""
    made = tables.declared()
    check(t.name for t in made)
    skip = rebuilt()
    return tuple(t for t in made if t.name not in skip)


def check(created: Iterable[str]) -> None:
    """Refuse a schema whose tables and this declaration disagree: a table the steps create that no
    concept declares (nobody has said whose its rows are, so nothing may copy or secure them), or one
    a concept declares that no step creates (a migration step is missing)."""
    made, said = set(created), set(declared_tables())
    undeclared, unmigrated = sorted(made - said), sorted(said - made)
    if undeclared or unmigrated:
        problems = ([f"created by a schema step but declared by no store concept: {', '.join(undeclared)}"] * bool(undeclared)
                    + [f"declared by a store concept but created by no schema step: {', '.join(unmigrated)}"] * bool(unmigrated))
        raise BrainError(
            f"the brain's tables and their declaration disagree ({'; '.join(problems)})",
            "Declare each table under its concept in server/brain/stores.py and create it in a step of "
            "server/brain/migrations.py (`memverbs docs architecture`, \"Add a storage concept\").",
        )
