"""Where a link in a page's text goes in the inspector: where the brain resolves it.

put_page resolves every body link with server/verbs/links.py (a slug, a file name or title, an
alias, a path suffix, a path relative to the page's folder) and stores the page it found, or the
link's key when no page has that name yet (a later page with the name adopts it). The inspector
asks the same rule, read-only (`resolve_one`), for each link it draws, so `[[People/Dana Smith|Dana]]` goes to
`people/dana-smith` exactly as the page's stored link and Dana's backlinks say:

* a link to a live page: that page's view;
* a link to no page (unresolved): drawn as such, to what is filed under its key — the entity view,
  which lists the pages that link there and offers to write it; or, when nothing is filed there
  (a link only the owner's private text holds), the editor for a page of that slug;
* a file a note embeds or links (`![[arch diagram.png]]`, `[spec](spec.pdf)`): an attachment,
  never a link (the file lives in the note's folder, not in the brain);
* a web address: opens outside; any other scheme (`javascript:`) stays text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

from memverbs.server.pages.markdown import link_target
from memverbs.server.verbs.links import resolve_one

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain


class Link(NamedTuple):
    href: str | None  # where it goes in the inspector; None: not a link
    kind: str  # page | unresolved | attachment | external
    title: str  # what hovering says


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
ATTACHMENT_NOTE = "a file the note embeds: it stays in the note's folder, the brain keeps only the note"


def web_link(url: str, *, image: bool = False) -> Link | None:
    """A markdown link's web address (opens outside); None for anything else."""
    if url.startswith(("https://", "http://")):
        return Link(url, "external", "an image on the web" if image else url)
    return None


class PageLinks:
    """The links of one page's text (its body, its summary, its timeline rows), as the brain resolves them.

    Only a private page's links may resolve to private pages (as put_page resolved them)."""

    def __init__(self, brain: Brain, source: str, slug: str, *, private_page: bool) -> None:
        self.brain, self.source, self.slug, self.private_page = brain, source, slug, private_page
        self._seen: dict[str, Link] = {}

    def wiki(self, target: str, *, embed: bool = False) -> Link | None:
        named = link_target(target, wiki=True)
        return self._named(named, embed=embed) if named is not None else None

    def markdown(self, url: str, *, image: bool = False) -> Link | None:
        outside = web_link(url, image=image)
        if outside is not None:
            return outside
        if _SCHEME.match(url):
            return None  # javascript:, data: and the like: the label stays text
        named = link_target(url, wiki=False)
        if named is None:
            return None  # an anchor, mail, or a scheme that is not ours to follow: the label stays text
        if image and named[0] == "note":  # `![x](picture)` with no known suffix: still a file, not a note
            return Link(None, "attachment", ATTACHMENT_NOTE)
        return self._named(named, embed=image)

    def _named(self, named: tuple[str, str], *, embed: bool) -> Link:
        kind, target = named
        if kind == "attachment":
            return Link(None, "attachment", ATTACHMENT_NOTE)
        if target not in self._seen:
            self._seen[target] = self._resolved(target)
        link = self._seen[target]
        return link._replace(title=f"embedded note: {link.title}") if embed else link

    def _resolved(self, target: str) -> Link:
        slug = resolve_one(self.brain, self.source, self.slug, target, private_ok=self.private_page)
        if self.brain.page(self.source, slug) is not None:
            return Link(_path("/page/", slug), "page", slug)
        if self.brain.backlinks(self.source, slug, 1) or self.brain.fact_changes(self.source, 0, entity=slug, limit=1):
            return Link(_path("/entity/", slug), "unresolved", f"no page {slug} yet: what is filed under the name")
        return Link(_path("/edit/", slug), "unresolved", f"no page {slug} yet: write it")


def _path(view: str, slug: str) -> str:
    return view + quote(slug, safe="/")
