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
from dataclasses import dataclass, field

from memverbs.server.names import collapse

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


class PageFormatError(ValueError):
    """The markdown cannot be read as a page; the message says where."""


@dataclass
class ParsedPage:
    frontmatter: dict
    body: str
    title: str | None
    type: str | None
    summary: str | None
    visibility: str
    aliases: list[str] = field(default_factory=list)
    links: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    timeline: list[tuple[str, str, str | None]] = field(default_factory=list)


def parse_page(content: str) -> ParsedPage:
    frontmatter, body = split_frontmatter(content)
    title = _text(frontmatter.get("title")) or _first_heading(body)
    visibility = "private" if frontmatter.get("visibility") == "private" else "world"
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
        # libyaml's loader when PyYAML has it: the same safe subset, ~20x faster (an import reads thousands)
        data = yaml.load(m.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        raise PageFormatError(f"frontmatter is not valid YAML{line}: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise PageFormatError("frontmatter must be a mapping of keys to values (title: ..., type: ...)")
    return data, content[m.end() :]


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
    out = []
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


def _classified(body: str, *, keepends: bool = False):
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
    _, body = split_frontmatter(body) if body.startswith("---") else ({}, body)
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
