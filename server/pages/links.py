"""Link targets: what a `[[wikilink]]` points at, and dangling links that find their page later.

A body link is written the way people write them: `[[people/alice]]` (a slug),
`[[Alice Example]]` (a file name or title), `[[Ali]]` (an alias), `[[Plugins/Command palette]]`
(a path suffix) or `[x](../a/b.md)` (a path relative to the page's folder). The rule, in order
(docs/sync.md, "Links"):

1. a relative path (`./`, `../`, every markdown link) that is a live page's slug, joined to the page's folder;
2. the target as a slug, then its link key (the file slug rule: `Command Palette` → `command-palette`);
3. a page whose slug ends with `/<key>`, the shortest path first when several do (Obsidian's file-name match);
4. the one page with that title, then the one page with that alias.

Anything else is a dangling link stored as its link key, which `adopt_dangling_links` points at
its page once a page with that file name, path suffix, title or alias is saved.
"""

from __future__ import annotations

import posixpath

from memverbs.server.brain.base import Brain, PageDraft, draft_aliases
from memverbs.server.context import VerbContext
from memverbs.server.names import link_key, looks_like_slug, normalize_alias, slugify_path, title_key

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
            to_slug = resolve_body_target(ctx.brain, ctx.source, slug, to_slug, private_ok=private_ok)
        key = (to_slug, link_type, link_source)
        if key not in seen:
            seen.add(key)
            out.append((to_slug, link_type, link_source, context))
    return out


def resolve_body_target(brain: Brain, source: str, from_slug: str, target: str, *, private_ok: bool) -> str:
    """The slug a body link of `from_slug` points at, or the dangling target to store (the inspector
    asks this too, to draw a page's links as the brain resolves them)."""
    if target.startswith(("./", "../")):
        parts = posixpath.normpath(posixpath.join(posixpath.dirname(from_slug), target)).split("/")
        joined = "/".join(p for p in parts if p not in ("..", "."))  # above the vault's root: from its root
        bare = "/".join(seg for seg in target.split("/") if seg not in (".", ".."))
        for candidate in dict.fromkeys(c for c in (joined, link_key(joined)) if c):
            if looks_like_slug(candidate) and brain.page(source, candidate, allow_private=private_ok) is not None:
                return candidate
        if not bare:
            return target
        found = resolve_target(brain, source, bare, private_ok=private_ok)
        # Dangling: `../x` names one place; `x/y.md` is kept from the vault's root, as before, and
        # finds `here/x/y` too when that is created (a path suffix of it).
        return found or _itself(from_slug, link_key(bare)) or link_key(joined if target.startswith("../") else bare) or bare
    key = link_key(target)
    return resolve_target(brain, source, target, private_ok=private_ok) or _itself(from_slug, key) or key or target


def _itself(slug: str, key: str) -> str | None:
    """The page itself when the link names it (a page's first save cannot find itself among the live pages)."""
    return slug if key and (slug == key or slug.endswith("/" + key)) else None


def resolve_target(brain: Brain, source: str, target: str, *, private_ok: bool) -> str | None:
    if looks_like_slug(target) and brain.page(source, target, allow_private=private_ok) is not None:
        return target
    key = link_key(target)
    if key:
        if key != target and brain.page(source, key, allow_private=private_ok) is not None:
            return key
        tail = brain.pages_with_suffix(source, key, allow_private=private_ok, limit=50)
        if tail:
            return min((row["slug"] for row in tail), key=lambda s: (s.count("/"), len(s), s))
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
    names = {draft.title.lower(), draft.slug.rsplit("/", 1)[-1], link_key(draft.title)}
    parts = draft.slug.split("/")
    names.update("/".join(parts[i:]) for i in range(1, len(parts)))  # path suffixes: `[[plugins/x]]`
    for alias, norm in draft_aliases(draft):
        names.update((norm, link_key(alias)))
    names.add(slugify_path(draft.title.replace(" ", "-")))
    names.discard("")
    names.discard(draft.slug)
    return names


def adopt_dangling_links(ctx: VerbContext, draft: PageDraft) -> int:
    """Point dangling body links that name this page at it (only private pages' links, if it is private)."""
    return ctx.brain.adopt_links(
        ctx.source, draft.slug, sorted(link_names(draft)), from_private_only=draft.visibility == "private"
    )
