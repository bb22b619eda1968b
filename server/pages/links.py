"""Link targets: what a `[[wikilink]]` points at, and dangling links that find their page later.

A body link is written the way people write them: `[[people/alice]]` (a slug),
`[[Alice Example]]` (a title), `[[Ali]]` (an alias) or `[[alice]]` (a file name,
as Obsidian resolves it). A target that names one live page unambiguously is
stored as that page's slug; anything else is kept as written (lowercased), a
dangling link that `adopt_dangling_links` points at its page once a page with
that title, alias or file name is saved.
"""

from __future__ import annotations

from memverbs.server.brain.base import PageDraft, draft_aliases
from memverbs.server.context import VerbContext
from memverbs.server.names import looks_like_slug, normalize_alias, slugify_path, title_key

Link = tuple[str, str, str, str | None]


def resolve_links(ctx: VerbContext, slug: str, links: list[Link], *, private_page: bool) -> list[Link]:
    """Body links with their targets resolved to slugs where one live page is meant.

    Only a private page's links may resolve to private pages: a world page's stored links are
    readable by every caller, and must not name a private page its text does not name.
    """
    private_ok = ctx.pages_private_ok and private_page
    out: list[Link] = []
    seen: set[tuple[str, str, str]] = set()
    for to_slug, link_type, link_source, context in links:
        if link_source == "markdown":
            to_slug = resolve_target(ctx, to_slug, private_ok=private_ok) or to_slug
        key = (to_slug, link_type, link_source)
        if key not in seen:
            seen.add(key)
            out.append((to_slug, link_type, link_source, context))
    return out


def resolve_target(ctx: VerbContext, target: str, *, private_ok: bool) -> str | None:
    brain, source = ctx.brain, ctx.source
    if looks_like_slug(target) and brain.page(source, target, allow_private=private_ok) is not None:
        return target
    titled = brain.pages_titled(source, title_key(target), allow_private=private_ok)
    if len(titled) == 1:
        return titled[0]["slug"]
    # Only the aliases of pages this write may link to count: a private page's alias must neither
    # resolve a world page's link nor, by making a world alias ambiguous, stop it from resolving.
    aliased = brain.pages_by_slugs(source, brain.alias_slugs(source, normalize_alias(target)), allow_private=private_ok)
    if len(aliased) == 1:
        return next(iter(aliased))
    as_slug = slugify_path(target.replace(" ", "-"))
    if not as_slug:
        return None
    if as_slug != target and brain.page(source, as_slug, allow_private=private_ok) is not None:
        return as_slug
    tail = brain.pages_with_suffix(source, as_slug, allow_private=private_ok, limit=2)
    return tail[0]["slug"] if len(tail) == 1 else None


def link_names(draft: PageDraft) -> set[str]:
    """The ways a dangling link may name this page: title, aliases, file name, slugified title."""
    names = {draft.title.lower(), draft.slug.rsplit("/", 1)[-1]}
    names.update(norm for _, norm in draft_aliases(draft))
    names.add(slugify_path(draft.title.replace(" ", "-")))
    names.discard("")
    names.discard(draft.slug)
    return names


def adopt_dangling_links(ctx: VerbContext, draft: PageDraft) -> int:
    """Point dangling body links that name this page at it (only private pages' links, if it is private)."""
    return ctx.brain.adopt_links(
        ctx.source, draft.slug, sorted(link_names(draft)), from_private_only=draft.visibility == "private"
    )
