"""Page operations: what gives entity cards something to show.

They sit above the seven verbs on the `starter` and `full` surfaces and answer
in the same envelope style (protocol_version on every body, enumerated error
codes with a suggestion).
"""

from __future__ import annotations

from memverbs.server.protocol.model import Operation, Param

_PAGE_FORMAT = (
    "Markdown with optional YAML frontmatter (title, type, aliases, visibility: world|private, summary, "
    "links: {link_type: [slug, ...]}). [[slug]] and [text](slug) in the body become links; a '## Timeline' "
    "section of '- YYYY-MM-DD: what happened' lines becomes timeline entries."
)

PUT_PAGE = Operation(
    name="put_page",
    description=f"Create or replace a page by slug. {_PAGE_FORMAT} Returns {{slug, status: created|updated, ...}}.",
    params=(
        Param("slug", "string", "Page slug, lowercase path like people/alice-example.", required=True),
        Param("content", "string", "The whole page as markdown.", required=True),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "put_page (write a page)", "idempotentHint": True},
    handler="memverbs.server.verbs.page_ops:put_page",
)

GET_PAGE = Operation(
    name="get_page",
    description="Read one live page by slug: title, type, frontmatter, body, aliases, links and timeline.",
    params=(Param("slug", "string", "Page slug.", required=True),),
    scope="read",
    mutating=False,
    annotations={"title": "get_page (read a page)", "readOnlyHint": True},
    handler="memverbs.server.verbs.page_ops:get_page",
)

LIST_PAGES = Operation(
    name="list_pages",
    description="List live pages, newest first, optionally by type or slug prefix. Returns {pages:[{slug, title, type, updated_at}]}.",
    params=(
        Param("type", "string", "Only pages of this type (e.g. person)."),
        Param("prefix", "string", "Only slugs starting with this (e.g. people/)."),
        Param("limit", "number", "At most this many, default 50, max 500."),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "list_pages", "readOnlyHint": True},
    handler="memverbs.server.verbs.page_ops:list_pages",
)

SEARCH = Operation(
    name="search",
    description="Search pages by keyword, and by meaning too when an embedding provider is configured (search_degraded says when it is keyword-only). Returns {results:[{slug, title, chunk, evidence, create_safety, provenance}]}, the same result shape as recall's search arm.",
    params=(
        Param("query", "string", "What to look for.", required=True),
        Param("limit", "number", "At most this many results, default 10, max 100."),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "search (pages)", "readOnlyHint": True},
    handler="memverbs.server.verbs.page_ops:search",
)

ADD_TIMELINE_ENTRY = Operation(
    name="add_timeline_entry",
    description="Add a dated event to a page's timeline; recent entries show as open threads on its entity card.",
    params=(
        Param("slug", "string", "Page slug.", required=True),
        Param("date", "string", "Event date, YYYY-MM-DD.", required=True),
        Param("summary", "string", "One line: what happened.", required=True),
        Param("detail", "string", "Optional longer text."),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "add_timeline_entry"},
    handler="memverbs.server.verbs.page_ops:add_timeline_entry",
)

WHOAMI = Operation(
    name="whoami",
    description="Who this connection is to the brain: source, cursor lane, remote or local, scopes, surface and the person it acts for.",
    params=(),
    scope="read",
    mutating=False,
    annotations={"title": "whoami", "readOnlyHint": True},
    handler="memverbs.server.verbs.page_ops:whoami",
)

DELETE_PAGE = Operation(
    name="delete_page",
    description="Soft-delete a page: it disappears from every read but its row, links and history are kept; put_page revives it.",
    params=(Param("slug", "string", "Page slug.", required=True),),
    scope="write",
    mutating=True,
    annotations={"title": "delete_page (soft)", "destructiveHint": True, "idempotentHint": True},
    handler="memverbs.server.verbs.page_ops:delete_page",
)

ADD_LINK = Operation(
    name="add_link",
    description="Add a typed link between two pages (e.g. works_at). Edges whose link_source is mentions are left off entity cards.",
    params=(
        Param("from", "string", "Slug the link starts at.", required=True),
        Param("to", "string", "Slug the link points to.", required=True),
        Param("link_type", "string", "Relation, e.g. works_at, invested_in, references.", required=True),
        Param("context", "string", "Optional note on the relation."),
        Param("link_source", "string", "Where the link came from: manual (default) or mentions."),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "add_link", "idempotentHint": True},
    handler="memverbs.server.verbs.page_ops:add_link",
)

ADD_ALIAS = Operation(
    name="add_alias",
    description="Add another name for a page; entity resolution tries aliases first.",
    params=(
        Param("slug", "string", "Page slug.", required=True),
        Param("alias", "string", "The other name, e.g. a nickname or handle.", required=True),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "add_alias", "idempotentHint": True},
    handler="memverbs.server.verbs.page_ops:add_alias",
)

PAGE_OPERATIONS: tuple[Operation, ...] = (
    SEARCH,
    GET_PAGE,
    LIST_PAGES,
    PUT_PAGE,
    ADD_TIMELINE_ENTRY,
    WHOAMI,
    DELETE_PAGE,
    ADD_LINK,
    ADD_ALIAS,
)

STARTER_PAGE_OPS = ("search", "get_page", "list_pages", "put_page", "add_timeline_entry", "whoami")
