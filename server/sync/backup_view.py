"""What one person's backup holds: the world's rows and their own, table by table.

A private fact, page or page version, and a private link or timeline row, belong to the person
who wrote it and are read by them alone (docs/postgres.md, "People and privacy"); so is the text
of a world page's `[private]` facts-fence rows, which belong to the page's owner. A backup made
by a person holds what that person may read, cut the way memverbs cuts it everywhere else:

* another person's private page is left out with everything that shows only with it: its
  versions, chunks, aliases, links and timeline rows;
* another person's private fact is left out with its moves and its audit trail (whose reasons
  are that person's words), and a kept fact's supersession by it is cleared;
* another person's private version, link or timeline row is left out;
* the text of another person's world page (and of their versions) keeps its world rows: their
  `[private]` rows become one marker line, as `export` writes the page (render.py);
* people and projects are everyone's: names and repositories, never private material.

On SQLite the file's user reads every private fact, page and version already (one person's file:
docs/postgres.md, "People and privacy"), so the owner's backup of a SQLite brain keeps them;
only the `[private]` rows of another person's page text, and the links and timeline rows they
declare, are cut there, as every reader but the page's owner has them cut.

Which rule cuts a table is its declared kind (server/brain/stores.py, in server/brain/rows.py's
words), never its name: a kept table of a kind no rule here speaks for is left out whole (fail
closed), and counted. Every cut is counted per table, with whose rows they were, for the manifest
and the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from memverbs.server.brain.rows import Kept
from memverbs.server.brain.stores import declared_tables
from memverbs.server.pages.markdown import frontmatter_block, sealed_body

if TYPE_CHECKING:
    from memverbs.server.brain.rows import Whose
    from memverbs.server.brain.tables import Table

Row = dict[str, Any]
WHY = ("other people's private rows are theirs: a person's backup holds world rows and their own private rows "
       "(the brain's owner takes every person's with --all-people)")
# The kinds whose rows are everyone's (names and repositories, never private material): kept whole.
_EVERYONES = frozenset({"team", "people"})
# Each kind's rule (a PersonView method): which of its rows a person's backup keeps, and how cut.
_RULES = {"page": "_page", "versions": "_version", "with_page": "_with_page", "page_row": "_row_of_page",
          "fact": "_fact", "trail": "_of_fact", "with_fact": "_of_fact"}
_DECLARED = {name: d for name, d in declared_tables().items() if isinstance(d, Kept)}  # what a backup holds
EVERYONES = frozenset(name for name, d in _DECLARED.items() if d.whose.kind in _EVERYONES)
RULED = frozenset(name for name, d in _DECLARED.items() if d.whose.kind in _RULES) | EVERYONES  # every table a rule here speaks for


class PersonView:
    """Cuts the rows of the backup tables, read in backup order, to what `person` may read."""

    def __init__(self, person: int, facts: Callable[[], Iterable[Any]], *, every_private: bool = False) -> None:
        self.person = person
        self.every_private = every_private  # reads every private fact, page and version (SQLite's file's user)
        self._facts = facts  # (id, visibility, owner) of every fact: a fact may be superseded by a later one
        self.kept_facts: set[int] | None = None
        self.cut_pages: set[int] = set()
        self.cut_slugs: set[tuple[str, str]] = set()
        self.rows: Counter[str] = Counter()  # rows left out, per table
        self.texts: Counter[str] = Counter()  # rows whose text lost another person's [private] rows
        self.cleared = 0  # kept facts whose supersession by a left-out fact was cleared
        self.owners: set[int] = set()  # whose rows were cut
        self.unruled: set[str] = set()

    def keep(self, table: Table, batch: Sequence[Sequence[Any]]) -> list[tuple]:
        """The rows of `batch` this person's backup holds, cut as the module says."""
        cols = table.column_names
        if table.name in EVERYONES:
            return [tuple(r) for r in batch]
        declared = _DECLARED.get(table.name)
        rule: Callable[[Row, Whose], Row | None] | None = (
            getattr(self, _RULES[declared.whose.kind]) if declared is not None and declared.whose.kind in _RULES else None)
        if rule is None or declared is None:
            self.unruled.add(table.name)
            self.rows[table.name] += len(batch)
            return []
        out = []
        for values in batch:
            kept = rule(dict(zip(cols, values, strict=True)), declared.whose)
            if kept is None:
                self.rows[table.name] += 1
            else:
                out.append(tuple(kept[c] for c in cols))
        return out

    def left_out(self, names: dict[int, str], *, counted: bool) -> dict:
        """What was cut, for the manifest: `counted` False when the database hid rows from this login
        (a teammate's: other people's private rows never reached memverbs to be counted)."""
        return {
            "why": WHY,
            "people": sorted(names.get(p, f"#{p}") for p in self.owners),
            "rows": dict(sorted(self.rows.items())),
            "texts_cut": dict(sorted(self.texts.items())),
            "supersessions_cleared": self.cleared,
            "hidden_by_the_database": not counted,
            "no_rule": sorted(self.unruled),
        }

    # -- the rules ------------------------------------------------------------------------------

    def _mine(self, r: Row, flag: str = "visibility") -> bool:
        """A row this person may read: the world's, or their own."""
        if flag == "visibility":
            world = r[flag] == "world" or self.every_private
        else:
            world = not r[flag]
        if world or r["owner"] == self.person:
            return True
        self.owners.add(r["owner"])
        return False

    def _sealed(self, table: str, r: Row, *columns: str) -> Row:
        """Another person's text without their [private] rows (a marker line where each run was)."""
        if r["owner"] == self.person:
            return r
        cut = dict(r)
        for c in columns:
            if c == "body":
                cut[c] = sealed_body(r[c])
            elif r[c] is not None:  # markdown: the frontmatter as it is, the body sealed
                head = frontmatter_block(r[c])
                cut[c] = head + sealed_body(r[c][len(head):])
        if cut != r:
            self.texts[table] += 1
            self.owners.add(r["owner"])
        return cut

    def _page(self, r: Row, whose: Whose) -> Row | None:
        if not self._mine(r):
            self.cut_pages.add(r["id"])
            self.cut_slugs.add((r["source_id"], r["slug"]))
            return None
        return self._sealed("pages", r, "body", "markdown")

    def _version(self, r: Row, whose: Whose) -> Row | None:
        if r["page_id"] in self.cut_pages or not self._mine(r):
            return None
        return self._sealed("page_versions", r, "markdown")

    def _of_a_cut_page(self, r: Row, whose: Whose) -> bool:
        """Whether the row's page (found as its kind names it: rows.Whose.page) was left out."""
        how, _, column = whose.page.partition(":")
        return (r["source_id"], r[column]) in self.cut_slugs if how == "slug" else r[column] in self.cut_pages

    def _with_page(self, r: Row, whose: Whose) -> Row | None:
        return None if self._of_a_cut_page(r, whose) else r

    def _row_of_page(self, r: Row, whose: Whose) -> Row | None:
        if self._of_a_cut_page(r, whose) or not self._mine(r, "private_row"):
            return None
        return r

    def _fact(self, r: Row, whose: Whose) -> Row | None:
        kept = self._kept_facts()
        if r["id"] not in kept:
            self.owners.add(r["owner"])
            return None
        if r["superseded_by"] is not None and r["superseded_by"] not in kept:
            self.cleared += 1
            return dict(r, superseded_by=None)
        return r

    def _of_fact(self, r: Row, whose: Whose) -> Row | None:
        return r if r["fact_id"] in self._kept_facts() else None

    def _kept_facts(self) -> set[int]:
        if self.kept_facts is None:
            self.kept_facts = {int(i) for i, visibility, owner in self._facts()
                               if visibility == "world" or owner == self.person or self.every_private}
        return self.kept_facts
