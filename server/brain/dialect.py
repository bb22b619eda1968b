"""What the two SQL dialects say differently, named once: each backend's dialect supplies its own text.

The store concepts (`store.py`) write every statement both backends read the same way themselves;
a piece one backend spells its own way is a member of `Dialect`, and each backend's dialect
module gives it: `sqlite_dialect.SqliteDialect` and `postgres_dialect.PostgresDialect`. The pieces
are grouped by the store concept that asks for them. A piece is either a fixed statement or
fragment (a class attribute) or, where its text depends on the call, a method that writes it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import Any

    from memverbs.server.brain.base import Row, SearchQuery


class Dialect:
    name: str
    # What a best-effort write (bookkeeping a request must never fail on) lets go: the brain's own
    # error, or the driver's, as a statement inside a write may raise it.
    write_failures: tuple[type[Exception], ...]

    # -- rows, owners and lists (every store) ------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        """The owner a new row is written under, given the call's person as the parameter `mark`."""
        raise NotImplementedError

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        """`column` is one of `values`: the condition, and the parameters it takes in its place."""
        raise NotImplementedError

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    # The facts table as a project's reads name it in FROM: through the index on (source_id, project).
    facts_by_project: str
    # The same for a project's statements (its facts but events), through their own partial index.
    statements_by_project: str

    # -- sync --------------------------------------------------------------------------------------

    # The comparison under which NULL equals NULL (a watch claim's compare-and-swap).
    same: str
    # The pages table as sync's "changed since" reads name it in FROM: through pages_changed.
    pages_by_change: str

    def file_claims(self, source: str, slug: str, file_hash: str) -> str:
        """The synced files of `source`'s folders holding `slug` with the bytes `file_hash` (SQL
        expressions; NULL: any), whoever's folder, as a table (folder_id, rel_path, slug, file_hash,
        synced_at, root, host, person, mine): another person's folder named by person and host only."""
        raise NotImplementedError

    def prefix_claims(self, source: str) -> str:
        """The slug prefixes `source`'s synced folders claim, whoever's: (folder_id, slug_prefix, host, person, mine)."""
        raise NotImplementedError

    # -- pages -------------------------------------------------------------------------------------

    # Whether a page at (source, slug) exists that this session cannot see (another person's private page);
    # parameters (source, slug). None where every row is the session's to see (SQLite: one person's file).
    page_hidden: str | None

    def link_candidates(self, source: str, slugs: list[str], ranges: list[tuple[str, str, str]], title_keys: list[str],
                        alias_norms: list[str], allow_private: bool) -> tuple[str, tuple]:
        """The statement (and its parameters) that answers the link rule's questions at once
        (pages_store.link_candidates): rows (kind, key, slug). `ranges`: (suffix, lo, hi), the
        reversed-slug range of the live pages whose slug ends with '/<suffix>' (at most 50 each)."""
        raise NotImplementedError

    def text_match(self, query: SearchQuery) -> str | None:
        """The full-text match `query` is written as (FTS5 MATCH text, tsquery text), or None when
        nothing can match it."""
        raise NotImplementedError

    def pages_ranked(self, snippets: bool, rows_of: int | None, allow_private: bool) -> str:
        """The pages matching a `text_match`, best first, as rows (slug, title, body, chunk, rank,
        owner); parameters (match, source, allow_private, limit). With `snippets` the chunk is the
        body around the terms, cut by the statement or else by `page_hits`. Ranked as if no private
        row existed but the person `rows_of`'s (None: nobody's; page_search.py says why)."""
        raise NotImplementedError

    def pages_ranked_in_index(self, rows_of: int | None, allow_private: bool) -> str | None:
        """The same ranking read from the full-text index alone, where the index ranks apart from
        the table (the table's rows read only for the best): rows (slug, title, body, chunk, rank,
        owner, matched), parameters (match, limit × 4, source, allow_private, limit); None where
        the index lives in the table's rows."""
        return None

    def page_hits(self, rows: list[Row], query: SearchQuery, snippets: bool) -> list[Row]:
        """`pages_ranked`'s rows as keyword_search answers them (a snippet the statement did not cut)."""
        return rows

    def as_int(self, condition: str) -> str:
        """A condition as 1 or 0, to add up."""
        raise NotImplementedError

    def substring_index(self, term: str) -> tuple[str, str] | None:
        """A condition on the page `p` (and its parameter) that finds `term` as a substring of its
        title or body through an index, or None: the search scans for it."""
        return None

    # The aliases table as entity resolution names it in FROM: through aliases_lookup (source_id,
    # alias_norm, slug), one index range per name.
    aliases_by_name: str
    # The links table, as `l`, as adopt_links names it in FROM: through links_in (by target name).
    links_by_target: str
    # The comparison under which NULL differs from a value (`same`'s negation).
    differs: str

    def text_bytes(self, expr: str) -> str:
        """The length of a text in bytes (UTF-8)."""
        raise NotImplementedError

    # -- facts -------------------------------------------------------------------------------------

    # The statement that records a new fact (its id read by `inserted_fact_id`), from `fact_params`;
    # it, or `recorded_at`, stamps the recording time.
    insert_fact: str
    # remember's whole write without a vector as one statement (page check, exact check, the insert
    # they allow), answering (status, id, valid_until); None: the store runs the checks one by one.
    remember_fact: str | None
    # The facts table as entity_facts reads it (a planner hint where one is needed).
    facts_by_entity: str

    def recorded_at(self, now: int) -> int:
        """The recording time `insert_fact` is given, read inside the write transaction."""
        raise NotImplementedError

    def inserted_fact_id(self, cursor: Any) -> int:
        """The id `insert_fact` just gave the new fact."""
        raise NotImplementedError

    def fact_params(self, values: tuple[object, ...]) -> tuple[object, ...] | dict[str, object]:
        """`insert_fact`'s parameters from a new fact's values (facts_store.FACT_VALUES, in order)."""
        raise NotImplementedError

    def ranked_terms(self, query: SearchQuery) -> tuple[object, ...] | None:
        """The parameters the ranked statements begin with for `query`; None when it matches nothing."""
        raise NotImplementedError

    def facts_ranked(self, where: str, terms: tuple[object, ...], world: bool) -> str:
        """The facts `where` allows that hold a query term, best BM25 first (`score`, higher is
        better), ties newest first. Parameters: `terms` (what `ranked_terms` gave, which the
        statement may be written for), the where's, the limit. With `world` (a caller reading
        world facts only) BM25's corpus is the world facts alone: no private fact counts in how
        rare a word is or how long facts are, so none moves what the caller gets."""
        raise NotImplementedError

    def facts_ranked_in_index(self, where: str, world: bool) -> str | None:
        """`facts_ranked` ranking in the full-text index alone, then reading only the best
        matches' rows (each with `matched`, how many the index matched, at most its share);
        None where the index cannot rank alone. Parameters: `ranked_terms`, how many matches to
        take from the index, the where's, the limit."""
        raise NotImplementedError

    def facts_matching(
        self, query: SearchQuery, where: str, args: list[object], limit: int, world: bool
    ) -> tuple[str, list[object]] | None:
        """The statement and its parameters reading the facts `where` (over `facts f`) allows that
        match `query`, best first (with `world`, ranked over the world facts alone); None when the
        query matches nothing."""
        raise NotImplementedError

    # -- browse ------------------------------------------------------------------------------------

    greatest_of: str  # the function answering the largest of its arguments, row by row
    position_of: str  # the function answering where a substring starts in a text (from 1), 0 if nowhere

    def greatest(self, *exprs: str) -> str:
        """The largest of the expressions, row by row (each is NOT NULL where it is asked: SQLite's
        max() answers NULL for a NULL argument, where Postgres's greatest() skips it)."""
        return f"{self.greatest_of}({', '.join(exprs)})"

    def contains(self, text: str, needle: str) -> str:
        """The condition that `needle` occurs in `text`, as is (the caller lower()s both to ignore case)."""
        return f"{self.position_of}({text}, {needle}) > 0"

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        """A CTE `name` with one text column, one row per value (at least one), ordered as SQLite
        orders text (bytewise), and its parameters."""
        raise NotImplementedError

    # -- vectors -----------------------------------------------------------------------------------

