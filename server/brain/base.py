"""The storage seam: what the verbs, page ops, hooks and transports ask of a brain.

`Brain` is the one interface every backend implements (`SqliteBrain`, the
embedded default; `PostgresBrain`, a shared server database). It speaks only
backend-neutral types: the records below, rows that read like mappings
(`row["slug"]`, and positionally `row[0]`), epoch-millisecond integers and
plain strings. No verb builds SQL or a query syntax: search is a `SearchQuery`
the backend translates (FTS5 for SQLite, tsquery for Postgres), and the vector
arm asks the brain for its own `VectorIndex`.

A backend is opened through `memverbs.server.brain.factory.open_brain`, never
constructed directly, so the configured `brain.url` decides which one runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

from memverbs.server.errors import MemverbsError
from memverbs.server.record import Frozen, Record

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from typing import Any, Literal, Protocol

    import numpy as np

    from memverbs.server.name_index import Named

    Row = Any  # a mapping-like row: row["column"] and row[index]; sqlite3.Row or the Postgres row type
else:
    # The interfaces below are the type checker's; at run time each is a plain class, so opening a
    # brain (a hook's every start) does without importing typing.
    Protocol = object
    Row = object


class SearchQuery(Frozen):
    """A keyword search, as the verbs mean it; each backend writes it in its own syntax.

    `terms` are lowercased words (the verbs' own tokenisation). `mode`:
    * `all` — pages holding every term (anywhere in title or body);
    * `any` — pages holding at least one term;
    * `title_phrase` — the terms, in order and adjacent, in the title.

    `prefixes` (all and any only), one per term or none: term i is also found as any word that
    begins with prefixes[i] ("" for none; page search passes a word's stem, so that "turtles"
    finds "turtle").
    """

    __slots__ = ("mode", "prefixes", "terms")
    terms: tuple[str, ...]
    mode: Literal["all", "any", "title_phrase"]
    prefixes: tuple[str, ...]

    def __init__(
        self, terms: tuple[str, ...], mode: Literal["all", "any", "title_phrase"] = "all", prefixes: tuple[str, ...] = ()
    ) -> None:
        super().__init__(terms=terms, mode=mode, prefixes=prefixes)

    @classmethod
    def of(cls, terms: Iterable[str], mode: Literal["all", "any", "title_phrase"] = "all",
           prefixes: Iterable[str] = ()) -> SearchQuery:
        return cls(tuple(terms), mode, tuple(prefixes))

    def prefix(self, i: int) -> str:
        """The prefix term i is also found by ("" when none)."""
        return self.prefixes[i] if i < len(self.prefixes) and self.mode != "title_phrase" else ""


class LinkQuestions(Frozen):
    """What the link rule (server/verbs/links.py) asks the brain about a page's links, all at once: which
    of `slugs` are live pages, which pages end with '/<suffix>' (up to 50 each), have one of
    `title_keys`, or are named by one of `alias_norms`. Pages a caller with `allow_private` may see."""

    __slots__ = ("alias_norms", "allow_private", "slugs", "suffixes", "title_keys")
    slugs: tuple[str, ...]
    suffixes: tuple[str, ...]
    title_keys: tuple[str, ...]
    alias_norms: tuple[str, ...]
    allow_private: bool

    def __init__(self, slugs: tuple[str, ...], suffixes: tuple[str, ...], title_keys: tuple[str, ...],
                 alias_norms: tuple[str, ...], allow_private: bool) -> None:
        super().__init__(slugs=slugs, suffixes=suffixes, title_keys=title_keys, alias_norms=alias_norms,
                         allow_private=allow_private)

    def __bool__(self) -> bool:
        return bool(self.slugs or self.suffixes or self.title_keys or self.alias_norms)

    def covers(self, other: LinkQuestions) -> bool:
        """Whether these questions' answers answer `other`'s too (a page's world and private links are
        asked apart, and sent together)."""
        return self.allow_private == other.allow_private and all(
            set(getattr(other, name)) <= set(getattr(self, name)) for name in ("slugs", "suffixes", "title_keys", "alias_norms"))


class PageDraft(Record):
    """A page as put_page parsed it: everything a save replaces.

    `links` and `timeline` are the page's world view (what every reader of the page may see);
    `private_links` and `private_timeline` what only its private facts-fence rows declare, stored
    marked private and read back only by trusted callers (`private_rows=True` on the reads)."""

    __slots__ = (
        "aliases",
        "body",
        "frontmatter",
        "links",
        "markdown",
        "private_links",
        "private_timeline",
        "slug",
        "summary",
        "timeline",
        "title",
        "type",
        "visibility",
    )
    slug: str
    title: str
    type: str | None
    body: str
    frontmatter: dict
    summary: str | None
    visibility: str
    aliases: list[str]
    links: list[tuple[str, str, str, str | None]]  # to, type, link_source, context
    timeline: list[tuple[str, str, str | None]]  # date, summary, detail
    markdown: str | None  # the page's source as stored, for `get-page --raw`
    private_links: list[tuple[str, str, str, str | None]]
    private_timeline: list[tuple[str, str, str | None]]

    def __init__(self, slug: str, title: str, type: str | None, body: str, frontmatter: dict,  # noqa: A002 - the page's field
                 summary: str | None, visibility: str, aliases: list[str] | None = None,
                 links: list[tuple[str, str, str, str | None]] | None = None,
                 timeline: list[tuple[str, str, str | None]] | None = None, markdown: str | None = None,
                 private_links: list[tuple[str, str, str, str | None]] | None = None,
                 private_timeline: list[tuple[str, str, str | None]] | None = None) -> None:
        super().__init__(slug=slug, title=title, type=type, body=body, frontmatter=frontmatter, summary=summary,
                         visibility=visibility, aliases=[] if aliases is None else aliases,
                         links=[] if links is None else links, timeline=[] if timeline is None else timeline,
                         markdown=markdown, private_links=[] if private_links is None else private_links,
                         private_timeline=[] if private_timeline is None else private_timeline)

    def rows(self) -> tuple[list[tuple[tuple[str, str, str, str | None], int]], list[tuple[tuple[str, str, str | None], int]]]:
        """(links, timeline) to store, each with its private flag (0 world, 1 private), world rows first."""
        return (
            [(link, 0) for link in self.links] + [(link, 1) for link in self.private_links],
            [(row, 0) for row in self.timeline] + [(row, 1) for row in self.private_timeline],
        )


def draft_aliases(draft: PageDraft) -> list[tuple[str, str]]:
    """The draft's aliases as (alias, normalised) pairs, one per normalised form, first spelling kept."""
    from memverbs.server.names import normalize_alias  # noqa: PLC0415

    seen: dict[str, str] = {}
    for alias in draft.aliases:
        norm = normalize_alias(alias)
        if norm and norm not in seen:
            seen[norm] = alias
    return [(alias, norm) for norm, alias in seen.items()]


# Page history: how many replaced versions of one page are kept (the oldest go first). A page
# overwritten every minute keeps most of an hour; one edited by hand keeps months.
PAGE_HISTORY_KEEP = 50


def replaced_text(existing: Row | None, draft: PageDraft) -> str | None:
    """The text a save over `existing` replaces, for the page's history; None when nothing is lost
    (a new page, or the same text again, as a sync pass or write-back re-applies)."""
    if existing is None:
        return None
    before = existing["markdown"] if existing["markdown"] is not None else existing["body"]
    if not before or before == draft.markdown:
        return None
    return before


class NewFact(Record):
    __slots__ = (
        "confidence",
        "context",
        "entity_slug",
        "fact",
        "fact_norm",
        "kind",
        "notability",
        "project",
        "provenance",
        "source_session",
        "valid_from",
        "valid_until",
        "visibility",
    )
    fact: str
    fact_norm: str
    kind: str
    entity_slug: str | None
    visibility: str
    provenance: str
    valid_until: int | None
    source_session: str | None
    context: str | None
    confidence: float
    notability: str
    project: str | None  # the slug of the project it was remembered in (server/projects.py)
    # When the fact became true, if not when it is written: a fact read back from an export keeps its time.
    valid_from: int | None

    def __init__(self, fact: str, fact_norm: str, kind: str, entity_slug: str | None, visibility: str, provenance: str,
                 valid_until: int | None, source_session: str | None = None, context: str | None = None,
                 confidence: float = 1.0, notability: str = "medium", project: str | None = None,
                 valid_from: int | None = None) -> None:
        super().__init__(fact=fact, fact_norm=fact_norm, kind=kind, entity_slug=entity_slug, visibility=visibility,
                         provenance=provenance, valid_until=valid_until, source_session=source_session,
                         context=context, confidence=confidence, notability=notability, project=project,
                         valid_from=valid_from)


class FactFilter(Record):
    """What recall's facts arm asks for; `arm` picks the ordering."""

    __slots__ = ("active_only", "arm", "entity_slug", "limit", "now", "project", "session_id", "since", "world_only")
    arm: str  # supersessions | entity | session | recent
    now: int
    world_only: bool
    active_only: bool
    limit: int
    entity_slug: str | None
    session_id: str | None
    since: int | None
    project: str | None  # only facts remembered in this project (`memverbs recall --project`)

    def __init__(self, arm: str, now: int, world_only: bool, active_only: bool, limit: int, entity_slug: str | None = None,
                 session_id: str | None = None, since: int | None = None, project: str | None = None) -> None:
        super().__init__(arm=arm, now=now, world_only=world_only, active_only=active_only, limit=limit,
                         entity_slug=entity_slug, session_id=session_id, since=since, project=project)


def page_owner(existing: Row | None, draft: PageDraft, writer: int | None) -> int | None:
    """Whose a saved page (and its private facts-fence rows) is: a world page stays its owner's
    whoever rewrites it (a rewrite by someone else keeps the owner's private rows for them), a new
    or private page is its writer's."""
    if existing is not None and draft.visibility == "world":
        return int(existing["owner"])
    return writer


class TokenNameTaken(MemverbsError):
    """A live token already has this name."""


class SlugHidden(MemverbsError):
    """save_page: the slug is another person's private page, which this caller can neither see nor
    replace (Postgres's row-level security hid it). put_page answers as for any page it may not change."""

    def __init__(self, slug: str) -> None:
        super().__init__(f"the slug {slug!r} is taken by a page this caller may not change",
                         "Write the page under another slug.")


# -- vectors ------------------------------------------------------------------------


def pack(vector: np.ndarray | Sequence[float]) -> bytes:
    """A vector as stored and exchanged: float32 little-endian bytes."""
    import numpy as np  # noqa: PLC0415 - vectors exist only with a provider

    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(blobs: list[bytes], dims: int) -> np.ndarray:
    import numpy as np  # noqa: PLC0415

    if not blobs:
        return np.zeros((0, dims), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dims).astype(np.float32, copy=False)


class ScoredQuery(Protocol):
    """One query scored against a space: the best vectors, or the cosines of particular ones.

    Cosines are real cosines whichever index answers (an exact scan, a graph that only
    nominates candidates, or the database's own HNSW index)."""

    def top(self, k: int) -> list[tuple[int, float]]: ...

    def of(self, vector_ids: list[int]) -> dict[int, float]: ...


class VectorIndex(Protocol):
    """One vector space's page vectors, as the vector arm scores a query against them."""

    def __len__(self) -> int: ...

    def search(self, query: np.ndarray) -> ScoredQuery: ...


# -- the brain -----------------------------------------------------------------------


class Brain(Protocol):
    backend: str  # "sqlite" | "postgres"

    def close(self) -> None: ...

    # health, for doctor and init
    def schema_status(self) -> dict: ...
    def integrity(self) -> str: ...
    def counts(self, source_id: str) -> dict: ...
    def describe(self) -> str: ...
    def ping(self) -> None:
        """One round trip to storage (the HTTP server's /health)."""

    # backups and migrate: one consistent read of the brain, and every person's rows for its owner
    def snapshot(self) -> AbstractContextManager[Any]:
        """Every read this thread makes inside the block sees the brain at one moment; nothing is written."""
    def whole_brain(self) -> AbstractContextManager[None]:
        """Inside a snapshot or a write: every person's rows, for the brain's owner (BrainError for anyone else)."""

    # pages
    def page(self, source: str, slug: str, *, allow_private: bool = True) -> Row | None: ...
    def pages_by_slugs(self, source: str, slugs: list[str], *, allow_private: bool) -> dict[str, Row]: ...
    def alias_slugs(self, source: str, alias_norm: str) -> list[str]: ...
    def pages_titled(self, source: str, key: str, *, allow_private: bool) -> list[Row]:
        """Live pages whose title's key (names.title_key) is `key`."""
    def pages_with_suffix(self, source: str, tail: str, *, allow_private: bool, limit: int = 50) -> list[Row]: ...
    def named_pages(self, source: str, keys: list[str], *, allow_private: bool) -> list[Row]:
        """The name index's rows for `keys` (name_key, slug, how, type, title): server/name_index.py."""
    def named_in(self, source: str, text: str, *, allow_private: bool = False) -> Named:
        """What `text` names in `source`: server/name_index.py's rules over the brain's index."""
    def rebuild_names(self) -> None:
        """Write the name index again from every live page and its aliases (after a backup's restore)."""
    def pages_with_prefix(self, source: str, prefix: str, *, allow_private: bool, limit: int = 50) -> list[Row]: ...
    def link_candidates(self, source: str, questions: LinkQuestions) -> list[Row]:
        """What the link rule asks about a page's links, in one statement: rows (kind, key, slug, visibility)."""
    def aliases_of(self, source: str, slug: str) -> list[str]: ...
    # `allow_private`: may private pages show (as an edge's other end, a backlink's page)?
    # `private_rows`: may links and timeline rows a private facts-fence row declares show? Only
    # for trusted callers: those rows are private even on a page the caller may read.
    def timeline_newest(self, source: str, slug: str, limit: int = 5, *, private_rows: bool) -> list[Row]: ...
    def edges_out(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[Row]: ...
    def edges_in(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[Row]: ...
    def backlink_count(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> int: ...
    def list_pages(self, source: str, *, type_: str | None, prefix: str | None, limit: int, allow_private: bool) -> list[Row]: ...
    def count_pages(self, source: str, *, type_: str | None, prefix: str | None, allow_private: bool,
                    visibility: str | None = None, updated_since: int | None = None) -> int: ...
    # `snippets=False`: the caller does not read the rows' `chunk` (it may be None): one that cuts its
    # own from the world view does not pay for the index's, which FTS5 computes for every match.
    # `rows_of`: the person whose private facts-fence rows the caller may read (None: nobody's); the
    # ranking and the matches read every other page as if its private rows did not exist.
    def keyword_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                       snippets: bool = True, rows_of: int | None = None) -> list[Row]: ...
    def aliased_slugs(self, source: str, slugs: list[str], alias_norm: str) -> set[str]: ...
    def changed_pages(self, source: str, since: int, since_slug: str | None, *, limit: int, allow_private: bool) -> list[Row]: ...
    def save_page(
        self, source: str, slug: str, build: Callable[[Row | None], PageDraft], now: int, *, by: str = "local",
        links: LinkQuestions | None = None,
    ) -> tuple[bool, PageDraft]:
        """Create or replace a page: `build` gets the slug's current row (live, deleted or private;
        None if there is none) under the write lock and returns the draft, or raises to refuse and
        write nothing. A text it replaces is kept in the page's history, replaced by `by` (the
        caller's lane). `links`: what resolving the page's links will ask (`link_candidates`), sent
        with the lock so `build`'s resolution is answered without another round trip. Returns
        (created or revived, the draft saved)."""
    def page_versions(self, source: str, slug: str) -> list[Row]:
        """The page's kept versions, newest first (without their text): version, title, visibility,
        bytes, written_at, replaced_at, replaced_by. Trusted callers only: private pages too."""
    def page_version(self, source: str, slug: str, version: int) -> Row | None:
        """One kept version of the page, with its markdown; None if there is no such version."""
    # The page writes below answer None for a page that is missing, deleted or (allow_private
    # False) private, checked inside the write: a caller cannot tell those apart.
    def delete_page(self, source: str, slug: str, now: int, *, allow_private: bool) -> bool | None: ...
    def add_alias(self, source: str, slug: str, alias: str, alias_norm: str, now: int, *, allow_private: bool) -> bool | None: ...
    def add_link(self, source: str, from_slug: str, to_slug: str, link_type: str, link_source: str, context: str | None, now: int,
                 *, allow_private: bool) -> bool | None: ...
    def add_timeline_entry(self, source: str, slug: str, date: str, summary: str, detail: str | None, now: int,
                           *, allow_private: bool) -> int | None: ...
    def touch_retrieved(self, source: str, slugs: list[str], now: int) -> None: ...
    def adopt_links(self, source: str, slug: str, names: list[str], *, from_private_only: bool = False) -> int:
        """Point markdown links whose target is one of `names` (and names no live page) at `slug`."""
    def rename_page(self, source: str, old: str, new: str, now: int, *, title: tuple[str, str] | None = None) -> None:
        """Move a page to a new slug with its aliases, links, timeline and facts, in one write; with
        `title` (was, becomes), a title that is `was` becomes `becomes` (a title from the file name)."""
    def page_links(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> list[Row]:
        """The page's links (get_page), without those to pages the caller may not see."""

    # facts
    def insert_fact(self, source: str, new: NewFact, now: int) -> int: ...
    def remember_fact(
        self,
        source: str,
        new: NewFact,
        now: int,
        *,
        vector: bytes | None = None,
        space_id: int | None = None,
        choose: Callable[[list[Row]], tuple[str, Row] | None] | None = None,
        dedup: bool = True,
        require_page: bool = False,
        allow_private: bool = True,
    ) -> tuple[str, int, Row | None]: ...
    def fact(self, fact_id: int) -> Row | None: ...
    def expire_fact(self, fact_id: int, now: int, reason: str) -> bool: ...
    def facts(self, source: str, f: FactFilter) -> list[Row]: ...
    def active_commitments(self, source: str, slug: str, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def active_fact_count(self, source: str, slug: str, *, world_only: bool, now: int, cap: int = 100) -> int: ...
    def entity_facts(self, source: str, slugs: list[str], *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def session_facts(self, source: str, session_id: str, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def recent_facts(self, source: str, created_after: int, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def facts_recorded_after(self, source: str, since: int, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def facts_recorded_at(self, source: str, at: int, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def recent_entity_slugs(self, source: str, *, limit: int, scan: int = 200) -> list[str]: ...

    def facts_ranked(
        self, source: str, f: FactFilter, query: SearchQuery, *, limit: int, among: list[int] | None = None
    ) -> list[Row]:
        """The facts recall's arm `f` allows (and, given `among`, only those ids) that hold any of the
        query's index terms (server/terms.py), best BM25 first, each row with its `score` (higher is
        better; the same formula on both backends)."""
    def facts_among(self, source: str, f: FactFilter, ids: list[int]) -> list[Row]:
        """Those of `ids` the arm `f` allows, in no particular order."""
    def facts_matching(
        self, source: str, query: SearchQuery, *, world_only: bool, now: int, since: int | None, until: int | None, limit: int
    ) -> list[Row]: ...

    # -- projects (server/projects.py) --
    def project_row(self, source: str, key: str) -> Row | None: ...
    def slug_taken(self, source: str, slug: str) -> bool: ...
    def register_project(self, source: str, key: str, name: str, slug: str, root: str, now: int) -> str: ...
    def projects(self, source: str, now: int) -> list[Row]: ...
    def project_facts(self, source: str, project: str, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def project_statements(self, source: str, project: str, *, world_only: bool, now: int, limit: int) -> list[Row]: ...
    def project_entity_slugs(self, source: str, project: str, *, limit: int) -> list[str]: ...
    def project_entities(self, source: str, project: str) -> set[str]: ...

    # browsing, for the CLI's trusted local caller only (private rows included; never an MCP tool)
    def entities(self, source: str, now: int, *, with_page: bool | None = None, type_: str | None = None,
                 prefix: str | None = None) -> list[Row]:
        """Every entity with a live page or a fact, most recently touched first: slug, title, type,
        visibility, has_page (1/0), facts, active, private, last_touched."""
    def entity_window(self, source: str, now: int, *, search: str = "", offset: int = 0,
                      limit: int = 50) -> tuple[int, list[Row]]:
        """One page of every entity by slug (rows as `entities`), and how many match in all."""
    def fact_only_slugs_ending(self, source: str, slug: str) -> list[tuple[str, int]]: ...
    def stats(self, source: str, now: int) -> dict:
        """Counts of what the brain holds for a source, and `brain_bytes`, its size in storage."""
    def backlinks(self, source: str, slug: str, limit: int) -> list[Row]: ...
    def timeline_entries(self, source: str, slug: str, limit: int) -> list[Row]: ...
    def fact_count(self, source: str, f: FactFilter, grep: str | None = None) -> int: ...
    def fact_window(self, source: str, f: FactFilter, offset: int, grep: str | None = None) -> list[Row]: ...
    def fact_trail(self, fact_id: int) -> dict:
        """supersedes (facts it replaced), moves (`fact_moves`), audit (`fact_audit`: restores and
        visibility changes), each oldest first."""
    def move_facts(self, source: str, from_slug: str, to_slug: str, reason: str, now: int) -> list[tuple[int, str]]:
        """Refile every fact about `from_slug` under `to_slug` in one write, each move kept in
        `fact_moves`; (fact id, "moved" | "duplicate") pairs."""
    def restore_fact(self, source: str, fact_id: int, *, reason: str, actor: str, now: int) -> Row:
        """Un-forget one fact under the rules of fact_edits.py, the expiry it undoes kept in
        `fact_audit` with who (`actor`), when and why; the fact as it now is. Raises
        FactEditRefused (an enumerated code and a fix) with nothing written."""
    def set_fact_visibility(self, source: str, fact_id: int, visibility: str, *, widen: bool, reason: str,
                            actor: str, now: int) -> bool:
        """Make one fact world or private, audited in `fact_audit`; False when it already was. Making
        it world needs `widen=True`. Raises FactEditRefused with nothing written."""

    # the inspector's live feed (`memverbs ui`): newest change first, private rows included
    def fact_changes(self, source: str, after: int, *, entity: str | None = None, kind: str | None = None,
                     visibility: str | None = None, provenance: str | None = None, until: int | None = None,
                     limit: int = 200) -> list[Row]: ...
    def page_changes(self, source: str, after: int, *, entity: str | None = None, visibility: str | None = None,
                     until: int | None = None, limit: int = 200) -> list[Row]: ...

    # markdown folders' sync state (server/sync/state.py is the one caller)
    def sync_folder(self, source: str, root: str, prefix: str, mode: str, now: int, host: str | None = None,
                    uid: str | None = None, folder_id: int | None = None) -> Row: ...
    def sync_folder_rows(self, source: str, mode: str | None = None) -> list[Row]: ...
    def sync_folder_stamp(self, folder_id: int, *, passed_at: int | None = None, changed_at: int | None = None) -> None: ...
    def sync_folder_unavailable(self, folder_id: int, at: int | None, reason: str | None = None) -> None:
        """Mark the folder unavailable since `at`, with why; `at` None: it is back."""
    def sync_prefix_claims(self, source: str) -> list[Row]:
        """Every synced folder's slug prefix, whoever's: folder_id, slug_prefix, host, person, mine."""
    def sync_watcher_claim(self, folder_id: int, held: Sequence, mine: Sequence) -> bool: ...
    def sync_watcher_beat(self, folder_id: int, pid: int, host: str, beat: int | None) -> bool: ...
    def sync_file_rows(self, folder_id: int) -> list[Row]: ...
    def sync_file_row(self, folder_id: int, *, rel_path: str | None = None, slug: str | None = None) -> Row | None: ...
    def sync_record_file(self, folder_id: int, row: Sequence) -> None:
        """`row`: rel_path, slug, file_hash, size, mtime_ns, page_updated_at, synced_at."""
    def sync_forget_file(self, folder_id: int, rel_path: str) -> None: ...
    def sync_slug_files(self, source: str, slug: str) -> list[Row]:
        """Every folder's file that maps to `slug`: folder_id, rel_path and root (None: another person's folder),
        host, person, mine."""
    def sync_all_file_slugs(self, source: str) -> set[str]: ...
    def sync_deleted_pages(self, source: str, since: int, limit: int = 500) -> list[Row]: ...
    def repoint_links(self, source: str, old: str, new: str) -> None: ...
    def sync_files_with_bytes(self, source: str, file_hash: str) -> list[Row]:
        """Every folder's file with these bytes: slug, folder_id, rel_path (None: another person's), host, person, mine."""
    def sync_due(self, source: str, folder_id: int, since: int = 0) -> list[Row]:
        """Synced pages written since their file's last sync: (rel_path, slug) rows."""
    def sync_unfiled(self, source: str, folder_id: int, since: int = 0) -> list[Row]:
        """Live pages of the folder's slug space no synced file holds, written since `since`: (slug, title, updated_at)."""
    def sync_add_conflict(self, folder_id: int, rel_path: str, slug: str, brain_content: str, now: int,
                          cause: str = "file_won") -> int: ...
    def sync_conflict_rows(self, source: str, folder_id: int | None = None, *, open_only: bool = True) -> list[Row]: ...
    def sync_resolve_conflicts(self, ids: Sequence[int], now: int) -> int: ...
    def sync_failure_rows(self, folder_id: int) -> list[Row]: ...
    def sync_record_failure(self, folder_id: int, row: Sequence, now: int) -> None: ...
    def sync_clear_failures(self, folder_id: int, rel_paths: Sequence[str]) -> None: ...
    def live_page_slugs(self, source: str) -> list[tuple[str, str]]: ...
    def manual_aliases(self, source: str, slug: str) -> list[str]: ...
    def manual_links(self, source: str, slug: str, *, allow_private: bool = True) -> list[tuple[str, str]]: ...
    def manual_timeline(self, source: str, slug: str) -> list[tuple[str, str]]: ...

    # delta cursors
    def cursor(self, source: str, client: str, session: str) -> Row | None: ...
    def save_cursor(self, source: str, client: str, session: str, last_wake_at: int, slug: str, now: int) -> None: ...
    def start_cursor(self, source: str, client: str, session: str, last_wake_at: int, now: int) -> None: ...
    def gc_cursors(self, now: int, source: str | None = None, client: str | None = None) -> int: ...

    # access tokens
    # people (server/people.py; people_store.py)
    def session_person(self) -> int: ...
    def people(self) -> list[Row]: ...
    def person_named(self, name: str) -> Row | None: ...
    def person_id(self, name: str) -> int | None: ...
    def person_name(self, person: int) -> str | None: ...
    def add_person(self, name: str, role: str | None, now: int) -> int: ...
    def set_person_role(self, name: str, role: str | None) -> None: ...

    def create_token(self, *, name: str, token_hash: str, token_hint: str, scopes: str, surface: str,
                     source_id: str, client_id: str, now: int, person: int = ...) -> int: ...
    def tokens(self, *, include_revoked: bool = False) -> list[Row]: ...
    def live_token(self, token_hash: str) -> Row | None: ...
    def revoke_token(self, name: str, now: int) -> int: ...
    def touch_token(self, token_id: int, last_used_at: int | None, now: int) -> None: ...

    # OAuth clients and credentials (oauth_store.py: the same SQL on both backends)
    def oauth_add_client(self, *, client_id: str, name: str, metadata: str, secret_hash: str | None, lane: str,
                         now: int) -> int: ...
    def oauth_client(self, client_id: str) -> Row | None: ...
    def oauth_clients(self, *, include_revoked: bool = False) -> list[Row]: ...
    def oauth_revoke_client(self, client_ref: int, now: int) -> int: ...
    def oauth_touch_client(self, client_ref: int, last_used_at: int | None, now: int) -> None: ...
    def oauth_live_clients(self) -> int: ...
    def oauth_forget_unused_clients(self, before: int) -> int: ...
    def oauth_credential(self, kind: str, token_hash: str) -> Row | None: ...
    def oauth_exchange(self, used: int | None, issue: list[dict], now: int) -> list[int] | None: ...
    def oauth_revoke_family(self, family: int, now: int) -> int: ...
    def oauth_forget_expired(self, before: int, *, requests_before: int | None = None) -> int: ...
    def oauth_pending(self, client_ref: int, now: int) -> tuple[int, int]: ...
    def oauth_failed_attempt(self, token_id: int) -> int: ...
    def oauth_live_grants(self, now: int) -> list[Row]: ...
    def oauth_add_owner_secret(self, *, kind: str, secret_hash: str, expires_at: int | None, now: int) -> int: ...
    def oauth_owner_secrets(self, kind: str, now: int) -> list[Row]: ...
    def oauth_use_owner_secret(self, secret_id: int, now: int) -> bool: ...
    def oauth_clear_owner_secrets(self, kind: str, now: int) -> int: ...

    # chunks and vectors
    def space_id(self, provider: str, model: str, dims: int, *, create: bool = False) -> int | None: ...
    def space_for(self, provider: str, model: str, dims: int | None) -> int | None: ...
    def spaces(self) -> list[Row]: ...
    def chunk_unchunked_pages(self, limit: int = 500) -> int: ...
    def unchunked_page_count(self) -> int: ...
    def chunks_missing_vectors(self, space_id: int, *, after_chunk: int, limit: int) -> list[Row]: ...
    def page_chunks_missing_vectors(self, source: str, slug: str, space_id: int) -> list[Row]: ...
    def missing_vector_counts(self, space_id: int | None, now: int) -> dict: ...
    def store_text_vectors(self, space_id: int, items: list[tuple[str, bytes]], now: int) -> None: ...
    def chunk_hits(self, source: str, vector_ids: list[int], *, allow_private: bool) -> list[Row]: ...
    def page_vector_ids(self, source: str, slugs: list[str], space_id: int) -> list[Row]: ...
    def facts_missing_vectors(self, space_id: int, now: int, *, after_fact: int, limit: int) -> list[Row]: ...
    def fact_vectors_after(self, space_id: int, after_fact: int) -> list[Row]:
        """The space's fact vectors (every source) above a fact id, in id order: fact_id, vector."""
    def fact_vector_count(self, space_id: int) -> int: ...
    def store_fact_vectors(self, space_id: int, items: list[tuple[int, bytes]], now: int) -> None: ...
    def prune_vectors(self, keep_space_id: int | None) -> dict: ...
    def vector_index(self, space_id: int, dims: int) -> VectorIndex:
        """The brain's index of a space's page vectors, brought up to date (shared within a process)."""
    def build_vector_index(self, space_id: int, dims: int) -> bool:
        """Prepare the index ahead of queries (reindex calls it after filling vectors); True when an
        approximate graph now answers (SQLite's HNSW over a big snapshot, pgvector's HNSW)."""
    def vector_index_kind(self) -> str:
        """What answers the vector arm, in words for doctor (e.g. "exact scan, memory-mapped snapshot")."""


__all__ = [
    "Brain",
    "FactFilter",
    "NewFact",
    "PageDraft",
    "Row",
    "ScoredQuery",
    "SearchQuery",
    "TokenNameTaken",
    "VectorIndex",
    "pack",
    "unpack",
]
