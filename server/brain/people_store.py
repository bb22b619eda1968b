"""The brain's people (server/people.py), in either backend: the same SQL on SQLite and Postgres.

The owner (person 1) is not a row; the others are, with ids from 2, given under the write lock
(not by a sequence, which a copied or emptied brain would restart at 1). Mapping a person to a
Postgres role, and granting that role what a teammate needs, is the Postgres brain's own
(`postgres.PostgresBrain.grant_person_role`).
"""

from __future__ import annotations

from memverbs.server.brain.store import Store
from memverbs.server.errors import BrainError
from memverbs.server.people import OWNER, OWNER_NAME

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

PERSON_COLS = "id, name, role, created_at"
PERSON_COLUMNS = ("owner", "person")  # the columns a row names its person in (schema.PEOPLE)


def _next_id_sql() -> str:
    """The next person's id: past the people's own ids and every person a row names."""
    from memverbs.server.brain.tables import declared  # noqa: PLC0415 - read from the schema, when a person is added

    named = "".join(f" UNION ALL SELECT max({c}) FROM {t.name}" for t in declared() for c in t.column_names
                    if c in PERSON_COLUMNS)
    return f"SELECT max(n) + 1 FROM (SELECT coalesce(max(id), 1) AS n FROM people{named}) AS persons"


class PersonTaken(BrainError):
    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is already one of the brain's people", "See them with `memverbs people list`.")


class PeopleStore(Store):
    def session_person(self) -> int:
        """The person the brain's connection is, when a call names none: on SQLite the owner."""
        from memverbs.server.people import current  # noqa: PLC0415

        return current().person or OWNER

    def people(self) -> list[Row]:
        """The people the brain is shared with (the owner, person 1, is not a row), by id."""
        return self.query(f"SELECT {PERSON_COLS} FROM people ORDER BY id")

    def person_named(self, name: str) -> Row | None:
        return self.one(f"SELECT {PERSON_COLS} FROM people WHERE name = ?", (name,))

    def person_name(self, person: int) -> str | None:
        """The name of person `person` (1 is `owner`), or None for nobody the brain knows."""
        if person == OWNER:
            return OWNER_NAME
        row = self.one(f"SELECT {PERSON_COLS} FROM people WHERE id = ?", (person,))
        return None if row is None else str(row["name"])

    def person_id(self, name: str) -> int | None:
        """The id of the person called `name` (`owner` is 1), or None."""
        if name == OWNER_NAME:
            return OWNER
        row = self.person_named(name)
        return None if row is None else int(row["id"])

    def add_person(self, name: str, role: str | None, now: int) -> int:
        """A new person (ids from 2); PersonTaken when the name or the role is someone's already.

        The id is past every person the rows name, not only the people listed: rows whose person has
        no row (a brain restored or copied without its people) never become the new person's."""
        with self.write() as db, self.whole_brain():
            if db.execute("SELECT 1 FROM people WHERE name = ?", (name,)).fetchone() is not None:
                raise PersonTaken(f"person {name!r}")
            taken = None if role is None else db.execute(
                "SELECT name FROM people WHERE role = ?", (role,)
            ).fetchone()
            if taken is not None:
                raise PersonTaken(f"the role {role!r} (person {taken[0]!r})")
            next_id = db.execute(_next_id_sql()).fetchone()[0]
            db.execute(
                "INSERT INTO people (id, name, role, created_at) VALUES (?, ?, ?, ?)",
                (next_id, name, role, now),
            )
            return int(next_id)

    def set_person_role(self, name: str, role: str | None) -> None:
        with self.write() as db:
            taken = db.execute(
                "SELECT name FROM people WHERE role = ? AND name <> ?", (role, name)
            ).fetchone()
            if taken is not None:
                raise PersonTaken(f"the role {role!r} (person {taken[0]!r})")
            db.execute("UPDATE people SET role = ? WHERE name = ?", (role, name))
