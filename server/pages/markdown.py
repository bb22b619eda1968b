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

A page is read once into two views: the *private view* (everything the markdown says)
and the *world view* (the same page with its private facts-fence rows and their
continuation lines removed). Links and timeline rows come from each view; those only
the private view declares are stored marked private, so every untrusted read (get_page,
cards, packs, search) serves the world view.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import unquote

from memverbs.server.errors import MemverbsError
from memverbs.server.pages import bounded_yaml
from memverbs.server.pages.synopsis import (  # noqa: F401 - re-exported: the page's readers import them from here
    _FENCE,
    FRONTMATTER,
    SUMMARY_MAX,
    _classified,
    clip,
    fenced_body,
    frontmatter_block,
    safe_summary,
)
from memverbs.server.record import Record

_WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TIMELINE_ROW = re.compile(
    r"^\s*[-*+]\s+(?:\*\*|__)?(\d{4}-\d{2}-\d{2})(?:\*\*|__)?\s*(?:[:|—–-]\s*)?(.+?)\s*$"
)
_TIMELINE_SENTINEL = re.compile(r"^\s*(?:<!--\s*timeline\s*-->|---\s+timeline\s+---)\s*$", re.IGNORECASE)


class PageFormatError(MemverbsError, ValueError):
    """The markdown cannot be read as a page; the message says where."""


Link = tuple[str, str, str, str | None]  # to, type, link source, context
TimelineRow = tuple[str, str, str | None]  # date, summary, detail


class ParsedPage(Record):
    """A page's parts. `links` and `timeline` are the private view's (all the markdown declares);
    `world_links` and `world_timeline` the world view's, the only ones untrusted readers see."""

    __slots__ = ("aliases", "body", "frontmatter", "links", "summary", "timeline", "title", "type", "visibility",
                 "world_links", "world_timeline")
    frontmatter: dict
    body: str
    title: str | None
    type: str | None
    summary: str | None
    visibility: str | None
    aliases: list[str]
    links: list[Link]
    timeline: list[TimelineRow]
    world_links: list[Link]
    world_timeline: list[TimelineRow]

    def __init__(self, frontmatter: dict, body: str, title: str | None, type: str | None,  # noqa: A002 - the page's field
                 summary: str | None, visibility: str | None, aliases: list[str] | None = None,
                 links: list[Link] | None = None, timeline: list[TimelineRow] | None = None,
                 world_links: list[Link] | None = None, world_timeline: list[TimelineRow] | None = None) -> None:
        links = [] if links is None else links
        timeline = [] if timeline is None else timeline
        super().__init__(frontmatter=frontmatter, body=body, title=title, type=type, summary=summary, visibility=visibility,
                         aliases=[] if aliases is None else aliases, links=links, timeline=timeline,
                         world_links=links if world_links is None else world_links,
                         world_timeline=timeline if world_timeline is None else world_timeline)

    @property
    def private_links(self) -> list[Link]:
        """Links only the private view declares (in a private facts-fence row)."""
        return only_private(self.links, self.world_links)

    @property
    def private_timeline(self) -> list[TimelineRow]:
        """Timeline rows only the private view declares."""
        return only_private(self.timeline, self.world_timeline)


def only_private(full: list, world: list) -> list:
    """The items of the private view's list that the world view's does not hold (as a multiset)."""
    left = Counter(world)
    out = []
    for item in full:
        if left[item] > 0:
            left[item] -= 1
        else:
            out.append(item)
    return out


VISIBILITIES = ("world", "private")


def parse_page(content: str) -> ParsedPage:
    """The page's parts. `visibility` is None when the frontmatter does not say (the writer
    keeps what the page had); a value other than world or private is refused rather than
    read as world, so a typo never publishes a page."""
    frontmatter, body = split_frontmatter(content)
    title = _text(frontmatter.get("title")) or _first_heading(body)
    visibility = declared_visibility(frontmatter, repeated_visibility(content))
    if visibility is not None:
        frontmatter = _one_visibility_key(frontmatter, visibility)
    declared_links = _frontmatter_links(frontmatter.get("links"))
    world_body = without_private_rows(body)
    return ParsedPage(
        frontmatter=frontmatter,
        body=body,
        title=title,
        type=_text(frontmatter.get("type")),
        summary=_text(frontmatter.get("summary")),
        visibility=visibility,
        aliases=_string_list(frontmatter.get("aliases"), "aliases"),
        links=declared_links + body_links(body),
        timeline=timeline_rows(body),
        world_links=declared_links + body_links(world_body),
        world_timeline=timeline_rows(world_body),
    )


def split_frontmatter(content: str) -> tuple[dict, str]:
    m = FRONTMATTER.match(content)
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


def _is_visibility_key(key: object) -> bool:
    return isinstance(key, str) and key.strip().lower() == "visibility"


def declared_visibility(frontmatter: dict, repeated: list[object] | None = None) -> str | None:
    """What the frontmatter says the page's visibility is, fail closed.

    The key is read in any case (`Visibility:`, `VISIBILITY:`), and every value given counts,
    `repeated` ones included (a YAML mapping keeps only the last of a repeated key, so the
    parser hands the others over): each must be world or private, and private wins.
    """
    values = [v for k, v in frontmatter.items() if _is_visibility_key(k)] + list(repeated or [])
    if not values:
        return None
    said = set()
    for value in values:
        text = value.strip().lower() if isinstance(value, str) else None
        if text not in VISIBILITIES:
            raise PageFormatError(f"frontmatter visibility must be world or private, not {str(value)[:40]!r}")
        said.add(text)
    return "private" if "private" in said else "world"


def repeated_visibility(content: str) -> list[object]:
    """The values of every top-level visibility key of `content`'s frontmatter, as written, when a
    visibility key is given more than once (in any case); [] otherwise.

    The YAML is composed, not constructed (a node tree: no alias is expanded), and only when
    the block names the key at least twice, so an ordinary page pays one substring count.
    """
    m = FRONTMATTER.match(content)
    if m is None or m.group(1).lower().count("visibility") < 2:
        return []
    import yaml  # noqa: PLC0415 - as split_frontmatter: only writing a page parses YAML

    try:
        root = yaml.compose(m.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return []  # split_frontmatter has already refused what does not parse
    if not isinstance(root, yaml.MappingNode):
        return []
    found: list[object] = []
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and _is_visibility_key(key.value):
            found.append(value.value if isinstance(value, yaml.ScalarNode) else value)
    return found if len(found) > 1 else []


def _one_visibility_key(frontmatter: dict, visibility: str) -> dict:
    """The frontmatter with its visibility keys (any case) made one `visibility` key holding the resolved value."""
    out: dict = {}
    for key, value in frontmatter.items():
        if _is_visibility_key(key):
            out.setdefault("visibility", visibility)
        else:
            out[key] = value
    return out


_VISIBILITY_LINE = re.compile(r"""^(?:visibility|"visibility"|'visibility')[ \t]*:""", re.IGNORECASE)


def with_visibility(content: str, visibility: str) -> str | None:
    """The page's markdown with its frontmatter declaring exactly `visibility` (one made if it has
    none), everything else it means unchanged; None when that cannot be done safely (a visibility
    key written across lines, or in a flow mapping): the caller refuses rather than guess.

    Every top-level visibility line (any case, quoted or not) is dropped and one `visibility:`
    line goes first; the result is parsed back and must say `visibility` with the same other
    keys and the same body, or it is not used.
    """
    m = FRONTMATTER.match(content)
    if m is None:
        newline = "\r\n" if "\r\n" in content else "\n"
        candidate = f"---{newline}visibility: {visibility}{newline}---{newline}{content}"
    else:
        newline = "\r\n" if content[: m.start(1)].endswith("\r\n") else "\n"
        kept = "".join(line for line in m.group(1).splitlines(keepends=True) if not _VISIBILITY_LINE.match(line))
        kept = kept.rstrip("\r\n")
        inner = f"visibility: {visibility}" + (newline + kept if kept else "")
        candidate = content[: m.start(1)] + inner + content[m.end(1) :]
    try:
        before = parse_page(content) if m is not None else None
        after = parse_page(candidate)
    except PageFormatError:
        return None
    others_before = {} if before is None else {k: v for k, v in before.frontmatter.items() if not _is_visibility_key(k)}
    others_after = {k: v for k, v in after.frontmatter.items() if not _is_visibility_key(k)}
    same_body = after.body == (content if before is None else before.body)
    if after.visibility != visibility or others_after != others_before or not same_body:
        return None
    return candidate


def declare_private(content: str) -> str:
    """The page's markdown with `visibility: private` in its frontmatter, so the stored source says
    what the page is; the content unchanged if that cannot be done without changing what it means."""
    return with_visibility(content, "private") or content


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


# What export writes where it cut private facts-fence rows (`memverbs export` without
# --include-private): an import of that file puts the brain's rows back there instead of
# dropping them, since a file that never held them cannot mean to delete them.
KEPT_MARKER = "<!-- private rows kept in the brain -->"
_KEPT_MARKER = re.compile(r"^[ \t]*<!--\s*private rows kept in the brain\s*-->[ \t]*\r?\n?$", re.IGNORECASE)


def sealed_body(body: str) -> str:
    """The body as export writes it without private material: each run of private facts-fence
    rows becomes one KEPT_MARKER line."""
    out: list[str] = []
    in_run = False
    for line, _, private in _classified(body, keepends=True):
        if private:
            if not in_run:
                ending = "\r\n" if line.endswith("\r\n") else "\n"
                out.append(KEPT_MARKER + ending)
            in_run = True
            continue
        in_run = False
        out.append(line)
    return "".join(out)


def sealed_source(text: str) -> str:
    """A page's whole source (frontmatter and body) with its private facts-fence rows sealed: what a
    reader who is not the page's owner is shown, and what saving it back keeps (`restore_kept_rows`)."""
    head = frontmatter_block(text)
    return head + sealed_body(text[len(head) :])


def has_kept_marker(body: str) -> bool:
    return "private rows kept" in body.lower() and any(_KEPT_MARKER.match(line) for line in body.splitlines(keepends=True))


def restore_kept_rows(old_body: str, new_body: str) -> str:
    """`new_body` with its KEPT_MARKER lines replaced by `old_body`'s private rows (run by run when
    the counts agree, else all at the first marker), and no marker left; unchanged when `old_body`
    has no private rows.

    The rows must still be private where they land; when they would not be (a marker moved out of
    its facts fence), they go where keep_private_rows puts them, never into world text.
    """
    lines = new_body.splitlines(keepends=True)
    markers = {i for i, line in enumerate(lines) if _KEPT_MARKER.match(line)}
    bare = "".join(line for i, line in enumerate(lines) if i not in markers)
    runs = _private_runs(old_body)
    if not markers or not runs:
        return new_body  # nothing to put back (a new brain): the marker stays, as the file says it
    if len(runs) != len(markers):
        runs = ["".join(runs)]
    out: list[str] = []
    placed = dict(zip(sorted(markers), runs, strict=False))
    for i, line in enumerate(lines):
        if i in placed:
            run = placed[i]
            out.append(run if run.endswith("\n") else run + "\n")
        elif i not in markers:
            out.append(line)
    merged = "".join(out)
    wanted = Counter(line.rstrip("\r\n") for line, _, private in _classified(old_body, keepends=True) if private)
    got = Counter(line.rstrip("\r\n") for line, _, private in _classified(merged, keepends=True) if private)
    if all(got[line] >= n for line, n in wanted.items()):
        return merged
    return keep_private_rows(old_body, bare)


def _private_runs(body: str) -> list[str]:
    """The body's private facts-fence rows, one string per run of consecutive private lines."""
    runs: list[str] = []
    current: list[str] = []
    for line, _, private in _classified(body, keepends=True):
        if private:
            current.append(line)
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


def _is_fence(line: str, name: str) -> bool:
    m = _FENCE.search(line)
    return m is not None and (m.group(1) + m.group(2).lower()) == name


def _line_start(lines: list[str]) -> str:
    return "\n" if lines and not lines[-1].endswith("\n") else ""


def body_links(body: str) -> list[tuple[str, str, str, str | None]]:
    """The notes the body links to, as Obsidian reads them: `[[target#heading|alias]]` and embeds
    `![[target]]` name `target`; `[x](path.md)` (URL-encoded) names `./path`, a path relative to
    the page's folder that server/verbs/links.py resolves. Links inside fenced or inline code are
    text, and attachments (`![[img.png]]`, `[x](doc.pdf)`) are not notes."""
    text = _without_code(body)
    found = [link_target(m.group(1), wiki=True) for m in _WIKI_LINK.finditer(text)]
    found += [link_target(m.group(1), wiki=False) for m in _MD_LINK.finditer(text)]
    out: list[tuple[str, str, str, str | None]] = []
    seen: set[str] = set()
    for named in found:
        if named is None or named[0] != "note":
            continue
        slug = named[1]
        if slug and slug not in seen:
            seen.add(slug)
            out.append((slug, "references", "markdown", None))
    return out


def link_target(raw: str, *, wiki: bool) -> tuple[str, str] | None:
    """What one link of a body names, as body_links reads it: ("note", the target stored before it is
    resolved: `people/dana smith`, `./a/b`), ("attachment", the file), or None (a web address, an
    anchor, mail, nothing). `raw`: a wikilink's target (`[[raw#h|alias]]`), or a markdown link's URL."""
    if wiki:
        target = raw.strip().rstrip("\\").strip()
        if not target:
            return None
        return ("attachment", target) if is_attachment(target) else ("note", _body_target(target))
    target = raw.strip("<>")
    if "://" in target or target.startswith(("#", "mailto:")):
        return None
    target = unquote(target.split("#", 1)[0]).strip()
    if not target:
        return None
    if is_attachment(target):
        return ("attachment", target)
    if not target.startswith(("/", "./", "../")):
        target = "./" + target  # relative to the page's folder, as Obsidian writes them
    return ("note", _body_target(target))


_MD_TARGET = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # a link or an image: `[x](a.pdf)`, `![](a.png)`


def body_attachments(body: str) -> list[tuple[str, bool]]:
    """The files that are not notes the body embeds or links (`![[img.png]]`, `![](img/a.png)`,
    `[spec](spec.pdf)`), each once, as (target, by_name): a wikilink's target Obsidian finds by its
    file name anywhere in the vault (by_name), a markdown link's is a path from the note's folder
    (URL-decoded). Never inside code."""
    text = _without_code(body)
    out: dict[str, bool] = {}
    for m in _WIKI_LINK.finditer(text):
        target = m.group(1).strip().rstrip("\\").strip()
        if target and is_attachment(target):
            out.setdefault(target, True)
    for m in _MD_TARGET.finditer(text):
        target = m.group(1).strip("<>")
        if "://" in target or target.startswith(("#", "mailto:", "/")):
            continue
        target = unquote(target.split("#", 1)[0]).strip()
        if target and is_attachment(target):
            out.setdefault(target, False)
    return list(out.items())


# What Obsidian embeds as a file rather than a note: such links are attachments, never pages.
ATTACHMENT_SUFFIXES = frozenset(
    ["png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "ico", "tif", "tiff", "heic", "pdf", "mp3", "wav", "m4a", "ogg", "flac", "3gp", "webm", "mp4", "ogv", "mov", "mkv", "avi", "canvas", "base", "excalidraw", "zip", "csv", "xlsx", "docx", "pptx", "txt", "json"]
)
_CODE_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def is_attachment(target: str) -> bool:
    name = target.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in ATTACHMENT_SUFFIXES


def _without_code(body: str) -> str:
    """The body with fenced code blocks and inline code spans blanked (their text is never a link)."""
    out: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        m = _CODE_FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                out.append("")
                continue
            out.append(_INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line))
        else:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)) :].strip():
                fence = None
            out.append("")
    return "\n".join(out)


def _body_target(raw: str) -> str:
    """A body link's target as stored before resolving: lowercased, without `.md`; `./`/`../` kept
    (relative to the page's folder), a leading `/` (the vault's root) dropped."""
    s = raw.strip().split("#", 1)[0].strip()
    if s.lower().endswith(".md"):
        s = s[:-3]
    if s.startswith("/"):
        s = s.lstrip("/")
    return s.lower()


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


def private_rows(body: str) -> Counter[str]:
    """The body's private facts-fence lines (each as written, without its line ending), counted."""
    return Counter(line.rstrip("\r\n") for line, _, private in _classified(body, keepends=True) if private)


def without_private_rows(body: str) -> str:
    """The page as an untrusted reader may see it: every line kept but the private facts-fence rows.

    It is also the text an untrusted caller's keyword ranking reads (brain/page_search.py): SQLite
    calls it as `memverbs_world_body`, Postgres runs a PL/pgSQL twin of it (postgres_schema.py) that
    tests hold to it, so a change to what a private row is changes both."""
    if "[private]" not in body.lower():
        return body  # no row can start `[private]`: the whole page is world text (most pages)
    return "".join(line for line, _, private in _classified(body, keepends=True) if not private)


def _first_heading(body: str) -> str | None:
    for line in body.splitlines():
        h = _HEADING.match(line)
        if h and len(h.group(1)) == 1:
            return h.group(2).strip() or None
    return None


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):  # `title: [closed]` is YAML for a list: its items, not "['closed']"
        text = ", ".join(t for t in (_text(v) for v in value) if t)
    else:
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
