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

from memverbs.server.brain.base import Brain, LinkQuestions, PageDraft, draft_aliases
from memverbs.server.context import VerbContext
from memverbs.server.names import link_key, looks_like_slug, normalize_alias, slugify_path, title_key

Link = tuple[str, str, str, str | None]


def resolve_links(ctx: VerbContext, slug: str, links: list[Link], *, private_page: bool) -> list[Link]:
    """Body links with their targets resolved to slugs where one live page is meant.

    Only a private page's links may resolve to private pages: a world page's stored links are
    readable by every caller, and must not name a private page its text does not name.

    What the rule asks the brain (is there a page at this slug, which pages end with this name, have
    this title, this alias) is asked of every link at once, in one statement (`Known.of`): a page
    write resolves its links under the brain-wide write lock, where a round trip per question per
    link (on a database server) held every other writer up.
    """
    private_ok = ctx.pages_private_ok and private_page
    targets = [to for to, _, source, _ in links if source == "markdown"]
    known = Known.of(ctx.brain, ctx.source, ask(ctx, slug, targets), private_ok=private_ok) if targets else Known()
    out: list[Link] = []
    seen: set[tuple[str, str, str]] = set()
    for to_slug, link_type, link_source, context in links:
        if link_source == "markdown":
            to_slug = resolve_body_target(known, slug, to_slug)
        key = (to_slug, link_type, link_source)
        if key not in seen:
            seen.add(key)
            out.append((to_slug, link_type, link_source, context))
    return out


class Known:
    """The answers to the link rule's questions (below), from what the brain returned (`of`)."""

    def __init__(self) -> None:
        self.pages: set[str] = set()
        self.suffixes: dict[str, list[str]] = {}
        self.titles: dict[str, list[str]] = {}
        self.aliases: dict[str, set[str]] = {}

    @classmethod
    def of(cls, brain: Brain, source: str, asked: LinkQuestions, *, private_ok: bool) -> Known:
        """Every question the links ask (`questions`), answered in one statement (one `put_page` sends
        it with its write lock: `ask`). Only pages `private_ok` lets the link name count."""
        known = cls()
        for r in brain.link_candidates(source, asked):
            if not private_ok and r["visibility"] != "world":
                continue
            kind, key, slug = r["kind"], r["key"], r["slug"]
            if kind == "slug":
                known.pages.add(slug)
            elif kind == "suffix":
                known.suffixes.setdefault(key, []).append(slug)
            elif kind == "title":
                known.titles.setdefault(key, []).append(slug)
            else:
                known.aliases.setdefault(key, set()).add(slug)
        return known

    def page(self, slug: str) -> bool:
        """A live page the write may link to has this slug."""
        return slug in self.pages

    def with_suffix(self, key: str) -> list[str]:
        """Up to 50 such pages whose slug ends with '/<key>'."""
        return self.suffixes.get(key, [])

    def titled(self, key: str) -> list[str]:
        """Such pages whose title's key is `key`."""
        return self.titles.get(key, [])

    def aliased(self, norm: str) -> set[str]:
        """Such pages the alias `norm` names."""
        return self.aliases.get(norm, set())


def ask(ctx: VerbContext, from_slug: str, targets: list[str]) -> LinkQuestions:
    """What resolving `targets` (a page's body links) will ask the brain, asked as the caller may see
    pages (a world page's links then leave the private ones out: `Known.of`)."""
    return questions(from_slug, targets, allow_private=ctx.pages_private_ok)


def questions(from_slug: str, targets: list[str], *, allow_private: bool) -> LinkQuestions:
    """What resolving `targets` asks. Asked with nothing known, the rule asks all it can (each step goes
    on only when the one before found nothing), so what `_Asked` records is all the real pass may ask."""
    asked = _Asked()
    for target in targets:
        resolve_body_target(asked, from_slug, target)
    return LinkQuestions(tuple(sorted(asked.pages)), tuple(sorted(asked.suffixes)), tuple(sorted(asked.titles)),
                         tuple(sorted(asked.aliases)), allow_private)


def resolve_one(brain: Brain, source: str, from_slug: str, target: str, *, private_ok: bool) -> str:
    """Where one body link of `from_slug` goes, as put_page resolved it: the inspector asks this, read
    only, to draw a page's links where the brain sent them."""
    known = Known.of(brain, source, questions(from_slug, [target], allow_private=private_ok), private_ok=private_ok)
    return resolve_body_target(known, from_slug, target)


class _Asked(Known):
    """Knows nothing, and records every question it is asked."""

    def page(self, slug: str) -> bool:
        self.pages.add(slug)
        return False

    def with_suffix(self, key: str) -> list[str]:
        self.suffixes.setdefault(key, [])
        return []

    def titled(self, key: str) -> list[str]:
        self.titles.setdefault(key, [])
        return []

    def aliased(self, norm: str) -> set[str]:
        self.aliases.setdefault(norm, set())
        return set()


def resolve_body_target(known: Known, from_slug: str, target: str) -> str:
    """The slug a body link of `from_slug` points at, or the dangling target to store."""
    if target.startswith(("./", "../")):
        parts = posixpath.normpath(posixpath.join(posixpath.dirname(from_slug), target)).split("/")
        joined = "/".join(p for p in parts if p not in ("..", "."))  # above the vault's root: from its root
        bare = "/".join(seg for seg in target.split("/") if seg not in (".", ".."))
        for candidate in dict.fromkeys(c for c in (joined, link_key(joined)) if c):
            if looks_like_slug(candidate) and known.page(candidate):
                return candidate
        if not bare:
            return target
        found = resolve_target(known, bare)
        # Dangling: `../x` names one place; `x/y.md` is kept from the vault's root, as before, and
        # finds `here/x/y` too when that is created (a path suffix of it).
        return found or _itself(from_slug, link_key(bare)) or link_key(joined if target.startswith("../") else bare) or bare
    key = link_key(target)
    return resolve_target(known, target) or _itself(from_slug, key) or key or target


def _itself(slug: str, key: str) -> str | None:
    """The page itself when the link names it (a page's first save cannot find itself among the live pages)."""
    return slug if key and (slug == key or slug.endswith("/" + key)) else None


def resolve_target(known: Known, target: str) -> str | None:
    if looks_like_slug(target) and known.page(target):
        return target
    key = link_key(target)
    if key:
        if key != target and known.page(key):
            return key
        tail = known.with_suffix(key)
        if tail:
            return min(tail, key=lambda s: (s.count("/"), len(s), s))
    titled = known.titled(title_key(target))
    if len(titled) == 1:
        return titled[0]
    # Only the aliases of pages this write may link to count: a private page's alias must neither
    # resolve a world page's link nor, by making a world alias ambiguous, stop it from resolving.
    aliased = known.aliased(normalize_alias(target))
    if len(aliased) == 1:
        return next(iter(aliased))
    as_slug = slugify_path(target.replace(" ", "-"))
    if not as_slug:
        return None
    if as_slug != target and known.page(as_slug):
        return as_slug
    tail = known.with_suffix(as_slug)
    return tail[0] if len(tail) == 1 else None


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
