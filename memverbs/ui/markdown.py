"""A page's markdown as safe HTML: enough of markdown to read a brain page, nothing more.

Everything is escaped first, so no page can inject markup into the inspector. Wikilinks
become links to the inspector's page view; `- [ ]` / `- [x]` items are drawn as checkboxes; privacy fences (`<!-- facts -->` rows marked
`- [private]`, `<!-- takes -->` blocks) are shown as marked regions rather than hidden:
the inspector is the owner's view.
"""

from __future__ import annotations

import re
from html import escape
from urllib.parse import quote

from memverbs.server.pages.markdown import link_slug

_WIKI = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_EM = re.compile(r"(?<![*\w])\*([^*]+)\*(?![*\w])")
_FENCE = re.compile(r"^\s*<!--\s*(/?)(takes|facts)\s*-->\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")
_TASK = re.compile(r"^\[([ xX])\]\s+(.*)$")  # a task list item: `- [ ] to do`, `- [x] done`


def page_href(slug: str) -> str:
    return "/page/" + quote(slug, safe="/")


def inline(text: str) -> str:
    """One line of markdown, escaped, with links, code and emphasis."""
    out: list[str] = []
    pos = 0
    # Code spans first: nothing inside them is markup.
    for m in _CODE.finditer(text):
        out.append(_inline_plain(text[pos : m.start()]))
        out.append(f"<code>{escape(m.group(1))}</code>")
        pos = m.end()
    out.append(_inline_plain(text[pos:]))
    return "".join(out)


def _inline_plain(text: str) -> str:
    parts: list[str] = []
    pos = 0
    for m in _WIKI.finditer(text):
        parts.append(_emphasis(escape(text[pos : m.start()])))
        slug = link_slug(m.group(1))
        label = (m.group(2) or m.group(1)).strip()
        parts.append(f'<a class="wikilink" href="{escape(page_href(slug))}">{escape(label)}</a>')
        pos = m.end()
    rest = text[pos:]
    pieces: list[str] = []
    p2 = 0
    for m in _MDLINK.finditer(rest):
        pieces.append(_emphasis(escape(rest[p2 : m.start()])))
        target = m.group(2)
        if re.match(r"^https?://", target):
            href = target
        elif re.match(r"^\w[\w/-]*(\.md)?$", target):  # a slug or a note's path, in any script (`日本.md`)
            href = page_href(link_slug(target))
        else:
            href = None  # javascript:, data: and the like stay text
        label = _emphasis(escape(m.group(1)))
        pieces.append(f'<a href="{escape(href)}" rel="noreferrer">{label}</a>' if href else label)
        p2 = m.end()
    pieces.append(_emphasis(escape(rest[p2:])))
    return "".join(parts) + "".join(pieces)


def _emphasis(html: str) -> str:
    return _EM.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", html))


def render(body: str) -> str:
    """Block structure: headings, lists, code blocks, paragraphs, and the privacy fences."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    fence: str | None = None  # facts | takes while inside one
    code: list[str] | None = None

    def flush() -> None:
        if para:
            out.append(f"<p>{inline(' '.join(para))}</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(items) + "</ul>")
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
            out.append(f"<h{level}>{inline(h.group(2))}</h{level}>")
            continue
        it = _ITEM.match(line)
        if it:
            if para:
                out.append(f"<p>{inline(' '.join(para))}</p>")
                para.clear()
            text = it.group(1)
            if text.lower().startswith("[private]"):
                items.append(
                    '<li class="private"><span class="badge badge-private">private</span> '
                    + inline(text[len("[private]") :].strip())
                    + "</li>"
                )
            elif task := _TASK.match(text):
                done = task.group(1) != " "
                items.append(
                    f'<li class="task{" task-done" if done else ""}"><span class="check"><span class="sr">{"done" if done else "to do"}:'
                    f'</span></span><span class="task-text">{inline(task.group(2))}</span></li>'
                )
            else:
                items.append(f"<li>{inline(text)}</li>")
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
