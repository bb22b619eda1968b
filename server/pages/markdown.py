"""Reading a page's markdown: frontmatter, links, timeline, and the safe summary.

Page format (documented in docs/pages.md):

    ---
    title: Alice Example
    type: person
    aliases: [Ali, "@alice"]
    visibility: world            # or private
    summary: Runs payments at Acme.
    links: {works_at: companies/acme}
    ---
    # Alice Example
    Body text with [[companies/acme]] or [Acme](companies/acme.md) links.

    ## Timeline
    - 2026-08-01: Moved to the payments team.

Two fences keep text out of the card summary: a takes fence
(`<!-- takes -->` … `<!-- /takes -->`, opinions, always stripped) and a facts fence
(`<!-- facts -->` … `<!-- /facts -->`, one fact per line; a line starting with
`- [private]` is private and only trusted-local readers keep it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memverbs.server.errors import MemverbsError
from memverbs.server.names import collapse
from memverbs.server.pages import bounded_yaml
from memverbs.server.record import Record

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TIMELINE_ROW = re.compile(
    r"^\s*[-*+]\s+(?:\*\*|__)?(\d{4}-\d{2}-\d{2})(?:\*\*|__)?\s*(?:[:|—–-]\s*)?(.+?)\s*$"
)
_TIMELINE_SENTINEL = re.compile(r"^\s*(?:<!--\s*timeline\s*-->|---\s+timeline\s+---)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"<!--\s*(/?)(takes|facts)\s*-->", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SUMMARY_MAX = 160


class PageFormatError(MemverbsError, ValueError):
    """The markdown cannot be read as a page; the message says where."""


class ParsedPage(Record):
    __slots__ = ("aliases", "body", "frontmatter", "links", "summary", "timeline", "title", "type", "visibility")
    frontmatter: dict
    body: str
    title: str | None
    type: str | None
    summary: str | None
    visibility: str | None
    aliases: list[str]
    links: list[tuple[str, str, str, str | None]]
    timeline: list[tuple[str, str, str | None]]

    def __init__(self, frontmatter: dict, body: str, title: str | None, type: str | None,  # noqa: A002 - the page's field
                 summary: str | None, visibility: str | None, aliases: list[str] | None = None,
                 links: list[tuple[str, str, str, str | None]] | None = None,
                 timeline: list[tuple[str, str, str | None]] | None = None) -> None:
        super().__init__(frontmatter=frontmatter, body=body, title=title, type=type, summary=summary, visibility=visibility,
                         aliases=[] if aliases is None else aliases, links=[] if links is None else links,
                         timeline=[] if timeline is None else timeline)


VISIBILITIES = ("world", "private")


def parse_page(content: str) -> ParsedPage:
    """The page's parts. `visibility` is None when the frontmatter does not say (the writer
    keeps what the page had); a value other than world or private is refused rather than
    read as world, so a typo never publishes a page."""
    frontmatter, body = split_frontmatter(content)
    title = _text(frontmatter.get("title")) or _first_heading(body)
    visibility = declared_visibility(frontmatter)
    return ParsedPage(
        frontmatter=frontmatter,
        body=body,
        title=title,
        type=_text(frontmatter.get("type")),
        summary=_text(frontmatter.get("summary")),
        visibility=visibility,
        aliases=_string_list(frontmatter.get("aliases"), "aliases"),
        links=_frontmatter_links(frontmatter.get("links")) + body_links(body),
        timeline=timeline_rows(body),
    )


def split_frontmatter(content: str) -> tuple[dict, str]:
    m = _FRONTMATTER.match(content)
    if not m:
        return {}, content
    import yaml  # noqa: PLC0415 - only writing a page parses YAML; cards (the hook path) never do

    try:
        data = bounded_yaml.load(m.group(1)) or {}  # limits on size, depth and alias expansion
    except bounded_yaml.FrontmatterRefused as exc:
        raise PageFormatError(str(exc)) from exc
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        raise PageFormatError(f"frontmatter is not valid YAML{line}: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise PageFormatError("frontmatter must be a mapping of keys to values (title: ..., type: ...)")
    return data, content[m.end() :]


def stored_markdown(frontmatter: dict, body: str, markdown: str | None) -> str:
    """A page's source: as it was written, or (for pages saved before the source was kept)
    its frontmatter and body put back together."""
    if markdown is not None:
        return markdown
    if not frontmatter:
        return body
    import yaml  # noqa: PLC0415

    return "---\n" + yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True) + "---\n" + body


def frontmatter_block(content: str) -> str:
    """The frontmatter lines of `content`, delimiters included ('' when it has none)."""
    m = _FRONTMATTER.match(content)
    return m.group(0) if m else ""


def declared_visibility(frontmatter: dict) -> str | None:
    if "visibility" not in frontmatter:
        return None
    value = frontmatter["visibility"]
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in VISIBILITIES:
        raise PageFormatError(f"frontmatter visibility must be world or private, not {str(value)[:40]!r}")
    return text


def declare_private(content: str) -> str:
    """The page's markdown with `visibility: private` added to its frontmatter (one made if it has
    none), so the stored source says what the page is; the content unchanged if that cannot be done
    without changing what the frontmatter means."""
    m = _FRONTMATTER.match(content)
    if m is None:
        newline = "\r\n" if "\r\n" in content else "\n"
        candidate = f"---{newline}visibility: private{newline}---{newline}{content}"
    else:
        first_line_end = content.index("\n") + 1
        newline = "\r\n" if content[first_line_end - 2 : first_line_end] == "\r\n" else "\n"
        candidate = content[:first_line_end] + f"visibility: private{newline}" + content[first_line_end:]
    try:
        before, body = split_frontmatter(content)
        after, new_body = split_frontmatter(candidate)
    except PageFormatError:
        return content
    return candidate if after == {**before, "visibility": "private"} and new_body == body else content


def keep_private_rows(old_body: str, new_body: str) -> str:
    """`new_body` with the private facts-fence rows of `old_body` carried over.

    An untrusted writer never saw those rows (get_page leaves them out), so a write-back
    of what it read must not drop them. They go into the last facts fence of the new body,
    or a new fence at its end; they are placed only where they are still private rows.
    """
    rows = [line for line, _, private in _classified(old_body, keepends=True) if private]
    if not rows:
        return new_body
    block = "".join(r if r.endswith("\n") else r + "\n" for r in rows)
    lines = new_body.splitlines(keepends=True)
    closing = [i for i, (line, fence, _) in enumerate(_classified(new_body, keepends=True)) if fence is None and _is_fence(line, "/facts")]
    candidates = []
    if closing:
        i = closing[-1]
        candidates.append("".join(lines[:i]) + _line_start(lines[:i]) + block + "".join(lines[i:]))
    tail = new_body if not new_body or new_body.endswith("\n") else new_body + "\n"
    candidates.append(f"{tail}<!-- facts -->\n{block}<!-- /facts -->\n")
    for merged in candidates:
        kept = [line for line, _, private in _classified(merged, keepends=True) if private]
        if len(kept) >= len(rows) and all(r.rstrip("\r\n") in {k.rstrip("\r\n") for k in kept} for r in rows):
            return merged
    return candidates[-1]


def _is_fence(line: str, name: str) -> bool:
    m = _FENCE.search(line)
    return m is not None and (m.group(1) + m.group(2).lower()) == name


def _line_start(lines: list[str]) -> str:
    return "\n" if lines and not lines[-1].endswith("\n") else ""


def body_links(body: str) -> list[tuple[str, str, str, str | None]]:
    found: list[str] = []
    for m in _WIKI_LINK.finditer(body):
        found.append(m.group(1))
    for m in _MD_LINK.finditer(body):
        target = m.group(1)
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        found.append(target)
    out: list[tuple[str, str, str, str | None]] = []
    seen: set[str] = set()
    for raw in found:
        slug = link_slug(raw)
        if slug and slug not in seen:
            seen.add(slug)
            out.append((slug, "references", "markdown", None))
    return out


def link_slug(raw: str) -> str:
    s = raw.strip().split("#", 1)[0].strip()
    s = s.removeprefix("./").lstrip("/")
    if s.endswith(".md"):
        s = s[:-3]
    return s.lower()


def _frontmatter_links(value: object) -> list[tuple[str, str, str, str | None]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise PageFormatError("frontmatter links must map a link type to a slug or a list of slugs")
    out: list[tuple[str, str, str, str | None]] = []
    for link_type, targets in value.items():
        for target in _string_list(targets, f"links.{link_type}"):
            out.append((link_slug(target), str(link_type), "frontmatter", None))
    return out


def timeline_rows(body: str) -> list[tuple[str, str, str | None]]:
    """Dated rows under a `Timeline` heading, or anywhere after a `<!-- timeline -->` (or `--- timeline ---`) line."""
    rows: list[tuple[str, str, str | None]] = []
    level = 0
    for line in body.splitlines():
        if _TIMELINE_SENTINEL.match(line):
            level = 7  # deeper than any heading: the rest of the page is timeline
            continue
        h = _HEADING.match(line)
        if h and level == 7:
            continue
        if h:
            if h.group(2).strip().lower() == "timeline":
                level = len(h.group(1))
            elif level and len(h.group(1)) <= level:
                level = 0
            continue
        if level:
            m = _TIMELINE_ROW.match(line)
            if m:
                rows.append((m.group(1), m.group(2).strip(), None))
    return rows


def safe_summary(body: str, frontmatter_summary: str | None, *, include_private: bool) -> str:
    """The card synopsis: frontmatter summary, else the first prose sentence outside the fences."""
    if frontmatter_summary:
        return clip(collapse(frontmatter_summary))
    for line in fenced_body(body, include_private=include_private).splitlines():
        text = line.strip()
        if not text or text.startswith(("#", "<!--", "---", "```")):
            continue
        text = re.sub(r"^[-*+>]\s+", "", text)
        text = re.sub(r"^\[private\]\s*", "", text, flags=re.IGNORECASE)
        if not text:
            continue
        sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
        return clip(collapse(sentence))
    return ""


def _classified(body: str, *, keepends: bool = False) -> Iterator[tuple[str, str | None, bool]]:
    """Each line with the fence it is in and whether it belongs to a private facts row.

    A private row starts `- [private]` (any case) inside the facts fence; its indented
    continuation lines are private too.
    """
    fence: str | None = None
    private_row = False
    for line in body.splitlines(keepends=keepends):
        m = _FENCE.search(line)
        if m:
            fence = None if m.group(1) else m.group(2).lower()
            private_row = False
            yield line, None, False
            continue
        if fence == "facts":
            stripped = line.strip()
            if stripped.lstrip("-*+ ").lower().startswith("[private]"):
                private_row = True
            elif stripped and not line[:1].isspace():
                private_row = False  # a new row (or prose) at the fence's own level
        else:
            private_row = False
        yield line, fence, private_row


def fenced_body(body: str, *, include_private: bool) -> str:
    """The body with the takes fence removed and private facts-fence rows removed for untrusted readers."""
    body = body[len(frontmatter_block(body)) :]  # a second `---` block in a body is cut, never parsed: its YAML may be anything
    out: list[str] = []
    for line, fence, private in _classified(body):
        if fence is None and _FENCE.search(line):
            continue
        if fence == "takes" or (private and not include_private):
            continue
        out.append(line)
    return "\n".join(out)


def without_private_rows(body: str) -> str:
    """The page as an untrusted reader may see it: every line kept but the private facts-fence rows."""
    return "".join(line for line, _, private in _classified(body, keepends=True) if not private)


def clip(text: str, limit: int = SUMMARY_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_heading(body: str) -> str | None:
    for line in body.splitlines():
        h = _HEADING.match(line)
        if h and len(h.group(1)) == 1:
            return h.group(2).strip() or None
    return None


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _string_list(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [str(value)]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value if str(v).strip()]
    raise PageFormatError(f"frontmatter {name} must be a string or a list of strings")
