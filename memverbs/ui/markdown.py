"""A page's markdown as safe HTML: enough of markdown to read a brain page, nothing more.

Everything is escaped first, so no page can inject markup into the inspector. Links are drawn as
the brain resolves them (memverbs/ui/links.py): `[[People/Dana Smith|Dana]]` goes to the page it
names, a link to no page is drawn as unresolved (to what is filed under its name), a file a note
embeds or links (`![[arch diagram.png]]`, `[spec](spec.pdf)`) is an attachment, not a link, and a
web address opens outside. `- [ ]` / `- [x]` items are drawn as checkboxes, `1.` items as a
numbered list; privacy fences (`<!-- facts -->` rows marked `- [private]`, `<!-- takes -->`
blocks) are shown as marked regions rather than hidden: the inspector is the owner's view.
"""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote

from memverbs.ui.links import web_link

if TYPE_CHECKING:
    from memverbs.ui.links import Link, PageLinks

_WIKI = re.compile(r"(!?)\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_EM = re.compile(r"(?<![*\w])\*([^*]+)\*(?![*\w])")
_FENCE = re.compile(r"^\s*<!--\s*(/?)(takes|facts)\s*-->\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,9})[.)]\s+(.*)$")
_TASK = re.compile(r"^\[([ xX])\]\s+(.*)$")  # a task list item: `- [ ] to do`, `- [x] done`


def page_href(slug: str) -> str:
    return "/page/" + quote(slug, safe="/")


def inline(text: str, links: PageLinks | None = None) -> str:
    """One line of markdown, escaped, with links (resolved by `links`: the page the text belongs to;
    without it a wikilink is its label), code and emphasis."""
    out: list[str] = []
    pos = 0
    # Code spans first: nothing inside them is markup.
    for m in _CODE.finditer(text):
        out.append(_inline_plain(text[pos : m.start()], links))
        out.append(f"<code>{escape(m.group(1))}</code>")
        pos = m.end()
    out.append(_inline_plain(text[pos:], links))
    return "".join(out)


def _inline_plain(text: str, links: PageLinks | None) -> str:
    parts: list[str] = []
    pos = 0
    for m in _WIKI.finditer(text):
        parts.append(_markdown_links(text[pos : m.start()], links))
        embed, target, alias = m.group(1) == "!", m.group(2).strip(), m.group(3)
        label = (alias if alias is not None and alias.strip() else target).strip() or m.group(0)
        link = links.wiki(target, embed=embed) if links is not None and target else None
        parts.append(_drawn(link, escape(label)) if link is not None else f'<span class="wikilink">{escape(label)}</span>')
        pos = m.end()
    parts.append(_markdown_links(text[pos:], links))
    return "".join(parts)


def _markdown_links(text: str, links: PageLinks | None) -> str:
    pieces: list[str] = []
    pos = 0
    for m in _MDLINK.finditer(text):
        pieces.append(_emphasis(escape(text[pos : m.start()])))
        image, label, target = m.group(1) == "!", m.group(2), m.group(3)
        link = links.markdown(target, image=image) if links is not None else web_link(target, image=image)
        shown = _emphasis(escape(label)) if label.strip() else escape(target.rsplit("/", 1)[-1])
        pieces.append(_drawn(link, shown) if link is not None else shown)
        pos = m.end()
    pieces.append(_emphasis(escape(text[pos:])))
    return "".join(pieces)


def _drawn(link: Link, label_html: str) -> str:
    """A resolved link as HTML: a link to its page, an unresolved one (marked), an attachment (no link:
    the file lives in the note's folder, not in the brain), or a web address (opens outside)."""
    title = f' title="{escape(link.title)}"' if link.title else ""
    if link.kind == "attachment":
        return f'<span class="attachment"{title}><span aria-hidden="true">📎 </span>{label_html}</span>'
    if link.href is None:
        return label_html
    if link.kind == "external":
        return f'<a class="external" href="{escape(link.href)}" rel="noreferrer"{title}>{label_html}</a>'
    return f'<a class="wikilink {link.kind}" href="{escape(link.href)}"{title}>{label_html}</a>'


def _emphasis(html: str) -> str:
    return _EM.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", html))


def render(body: str, links: PageLinks | None = None) -> str:
    """Block structure: headings, lists, code blocks, paragraphs, and the privacy fences."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    listing = "ul"  # the open list's tag (`<ol start=N>` for a numbered one)
    fence: str | None = None  # facts | takes while inside one
    code: list[str] | None = None

    def flush_para() -> None:
        if para:
            out.append(f"<p>{inline(' '.join(para), links)}</p>")
            para.clear()

    def flush() -> None:
        flush_para()
        if items:
            close = listing.split()[0]
            out.append(f"<{listing}>" + "".join(items) + f"</{close}>")
            items.clear()

    for line in body.replace("\r\n", "\n").split("\n"):
        if code is not None:
            if line.strip().startswith("```"):
                out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
                code = None
            else:
                code.append(line)
            continue
        if line.strip().startswith("```"):
            flush()
            code = []
            continue
        m = _FENCE.match(line)
        if m:
            flush()
            closing, name = m.group(1) == "/", m.group(2).lower()
            if closing and fence == name:
                out.append("</section>")
                fence = None
            elif not closing and fence is None:
                label = "takes (opinions: never in the summary)" if name == "takes" else "facts fence"
                out.append(f'<section class="fence fence-{name}" aria-label="{label}"><p class="fence-label">{label}</p>')
                fence = name
            continue
        h = _HEADING.match(line)
        if h:
            flush()
            level = min(len(h.group(1)) + 1, 6)  # the page title is the view's h1
            out.append(f"<h{level}>{inline(h.group(2), links)}</h{level}>")
            continue
        numbered = _NUMBERED.match(line)
        bullet = None if numbered else _ITEM.match(line)
        if numbered is not None or bullet is not None:
            flush_para()
            wanted = f'ol start="{int(numbered.group(1))}"' if numbered is not None else "ul"
            if items and wanted.split()[0] != listing.split()[0]:
                flush()
            if not items:
                listing = wanted
            items.append(_item(numbered.group(2) if numbered is not None else bullet.group(1) if bullet else "", links))
            continue
        if not line.strip():
            flush()
            continue
        if items:
            flush()
        para.append(line.strip())
    if code is not None:
        out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
    flush()
    if fence is not None:
        out.append("</section>")
    return "\n".join(out)


def _item(text: str, links: PageLinks | None) -> str:
    if text.lower().startswith("[private]"):
        return ('<li class="private"><span class="badge badge-private">private</span> '
                + inline(text[len("[private]") :].strip(), links) + "</li>")
    task = _TASK.match(text)
    if task:
        done = task.group(1) != " "
        return (f'<li class="task{" task-done" if done else ""}"><span class="check"><span class="sr">{"done" if done else "to do"}:'
                f'</span></span><span class="task-text">{inline(task.group(2), links)}</span></li>')
    return f"<li>{inline(text, links)}</li>"
