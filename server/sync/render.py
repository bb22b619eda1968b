"""A page as a markdown file: the one rendering `export` and write-back use.

The file is the user's. What memverbs writes is the page's source as last written (the
file itself, or what an agent put), plus only what was added by hand in the brain that the
source does not say yet, each in a place it can recognise, nothing else reformatted:

* an alias added by `add_alias`: appended to the frontmatter's `aliases` (a flow list gets
  `, x` before its `]`, a block list one more `- x` line), or a new `aliases: [x]` key last;
* a link added by `add_link` (not a mention): the `links` key, only that key's lines rewritten,
  or a new `links:` key last;
* a timeline entry added by `add_timeline_entry`: a `- YYYY-MM-DD: …` row after the last row
  of the note's first `Timeline` section, or a `## Timeline` section appended at the end;
* `visibility: private` when the page is private and its source does not say so.

A note without a title gets none, keys keep their order, comments, style, quoting and dates,
and new lines take the note's own line ending. What the source already declares is never
added again, so rendering what importing the rendered file produced gives the same bytes:
write-back cycles with no new change leave the file byte-identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from memverbs.server.names import collapse, normalize_alias
from memverbs.server.pages.markdown import (
    FRONTMATTER,
    PageFormatError,
    ParsedPage,
    frontmatter_block,
    link_slug,
    parse_page,
    sealed_source,
    stored_markdown,
    with_visibility,
)

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TIMELINE_ROW = re.compile(r"^\s*[-*+]\s+(?:\*\*|__)?\d{4}-\d{2}-\d{2}")


def render_page(brain: Brain, source: str, slug: str, *, include_private: bool = True) -> str | None:
    """The page's file content, or None when it is missing (or private and not asked for)."""
    row = brain.page(source, slug, allow_private=include_private)
    if row is None:
        return None
    text = stored_markdown(json.loads(row["frontmatter"] or "{}"), row["body"], row["markdown"])
    private_ok = include_private and row["owner"] == brain.session_person()
    text = with_additions(
        text,
        aliases=brain.manual_aliases(source, slug),
        # A link added in the brain to a private page names it: written only where private material is.
        links=brain.manual_links(source, slug, allow_private=private_ok),
        timeline=brain.manual_timeline(source, slug),
        private=row["visibility"] == "private",
    )
    if not private_ok:
        # Cut private rows leave a marker, so importing the file back puts the brain's rows there
        # instead of dropping them (docs/sync.md, "Private material"). Another person's world page
        # is written without its private rows, as for a reader who did not ask for them: they are
        # its owner's (docs/postgres.md, "People and privacy").
        text = sealed_source(text)
    return text


def readable_source(brain: Brain, row: Row) -> str:
    """A page's stored source as the brain's person may read it (`get-page --raw`, the inspector's page
    and editor): whole for the page's owner, its private facts-fence rows sealed for anyone else (a
    save of what they were shown keeps those rows for the owner)."""
    text = stored_markdown(json.loads(row["frontmatter"] or "{}"), row["body"], row["markdown"])
    return text if row["owner"] == brain.session_person() else sealed_source(text)


def with_additions(text: str, *, aliases: list[str], links: list[tuple[str, str]], timeline: list[tuple[str, str]],
                   private: bool) -> str:
    """`text` with what it does not declare yet of these added; unchanged where it already does.

    Each addition is checked by parsing the result: one that would change anything else the
    note says (or cannot be written so it reads back) is left out rather than risk the note.
    """
    try:
        parsed = parse_page(text)
    except PageFormatError:
        return text  # never stored (put_page refuses it); nothing can be added safely
    nl = "\r\n" if "\r\n" in text else "\n"
    declared = {normalize_alias(a) for a in parsed.aliases}
    new_aliases: list[str] = []
    for alias in aliases:
        norm = normalize_alias(alias)
        if norm and norm not in declared:
            declared.add(norm)
            new_aliases.append(alias)
    if new_aliases:
        want = parsed.aliases + new_aliases
        text = _checked(text, parsed, lambda t: _add_list_items(t, "aliases", parsed.frontmatter.get("aliases"), new_aliases, nl),
                        lambda p: p.aliases == want, {"aliases"})
    parsed = parse_page(text)
    declared_links = _declared_links(parsed.frontmatter.get("links"))
    have = {(t, link_slug(s)) for t, targets in declared_links.items() for s in targets}
    added = False
    for link_type, to_slug in links:
        if (link_type, to_slug) not in have:
            have.add((link_type, to_slug))
            declared_links.setdefault(link_type, []).append(to_slug)
            added = True
    if added:
        want_links = declared_links
        text = _checked(text, parsed, lambda t: _set_key(t, "links", want_links, nl),
                        lambda p: _declared_links(p.frontmatter.get("links")) == want_links, {"links"})
    parsed = parse_page(text)
    if private and parsed.visibility != "private":
        text = with_visibility(text, "private") or text
        parsed = parse_page(text)
    seen = {(d, collapse(s)) for d, s, _ in parsed.timeline}
    rows: list[tuple[str, str]] = []
    for date, summary in timeline:
        key = (date, collapse(summary))
        if key[1] and key not in seen:
            seen.add(key)
            rows.append(key)
    if rows:
        want_rows = [(d, collapse(s)) for d, s, _ in parsed.timeline] + rows
        ok = lambda p: sorted((d, collapse(s)) for d, s, _ in p.timeline) == sorted(want_rows)  # noqa: E731
        before = text
        text = _checked(text, parsed, lambda t: _add_timeline(t, rows, nl, into_section=True), ok, set())
        if text == before:
            text = _checked(text, parsed, lambda t: _add_timeline(t, rows, nl, into_section=False), ok, set())
    return text


def _checked(text: str, parsed: ParsedPage, edit: Callable[[str], str | None], wanted: Callable[[ParsedPage], bool],
             keys: set[str]) -> str:
    """`edit(text)` when it parses, does what `wanted` says and leaves every other key and the body's
    other lines as they were; else `text`."""
    import yaml  # noqa: PLC0415

    try:
        candidate = edit(text)
    except yaml.YAMLError:
        return text
    if candidate is None:
        return text
    try:
        after = parse_page(candidate)
    except PageFormatError:
        return text
    others = {k: v for k, v in parsed.frontmatter.items() if k not in keys}
    if {k: v for k, v in after.frontmatter.items() if k not in keys} != others or not wanted(after):
        return text
    if keys and after.body != parsed.body:
        return text
    return candidate


# -- frontmatter, one key at a time ---------------------------------------------------------------

def _key_range(lines: list[str], key: str) -> tuple[int, int] | None:
    """The [start, end) lines of a top-level key: its line and the indented (or `- `) lines after it."""
    head = re.compile(rf"^(['\"]?){re.escape(key)}\1[ \t]*:(?:[ \t]|\r?\n|$)")
    for i, line in enumerate(lines):
        if head.match(line):
            end = i + 1
            while end < len(lines) and (lines[end][:1] in (" ", "\t") or lines[end].startswith("- ") or not lines[end].strip()):
                end += 1
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1  # blank lines after the key belong to the gap, not the key
            return i, end
    return None


def _dumped(key: str, value: object, nl: str) -> list[str]:
    return [line + nl for line in dump_yaml({key: value}).splitlines()]


def _edit_frontmatter(text: str, nl: str, change: Callable[[list[str]], list[str] | None]) -> str | None:
    m = FRONTMATTER.match(text)
    if m is None:
        lines = change([])
        return None if lines is None else "---" + nl + "".join(lines) + "---" + nl + text
    inner = m.group(1)
    lines = inner.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += nl
    changed = change(lines)
    if changed is None:
        return None
    new_inner = "".join(changed)
    new_inner = new_inner[: -len(nl)] if new_inner.endswith(nl) else new_inner.rstrip("\r\n")
    return text[: m.start(1)] + new_inner + text[m.end(1) :]


def _set_key(text: str, key: str, value: object, nl: str) -> str | None:
    def change(lines: list[str]) -> list[str]:
        span = _key_range(lines, key)
        if span is None:
            return [*lines, *_dumped(key, value, nl)]
        return lines[: span[0]] + _dumped(key, value, nl) + lines[span[1] :]

    return _edit_frontmatter(text, nl, change)


def _add_list_items(text: str, key: str, current: object, items: list[str], nl: str) -> str | None:
    """Append `items` to a list key in the style it is written in (flow or block)."""
    flow = dump_yaml({"k": items}).strip()[len("k: ") :]  # `[a, 'b: c']`, quoted as YAML needs
    if not (flow.startswith("[") and flow.endswith("]")):
        return None

    def change(lines: list[str]) -> list[str]:
        span = _key_range(lines, key)
        if span is None:
            return [*lines, f"{key}: {flow}{nl}"]
        start, end = span
        first = lines[start]
        value = first.split(":", 1)[1].strip()
        if end == start + 1 and value.startswith("[") and value.endswith("]"):
            inside = value[1:-1].strip()
            close = first.rstrip("\r\n").rfind("]")
            joined = flow[1:-1] if not inside else ", " + flow[1:-1]
            return [*lines[:start], first[:close] + joined + first[close:], *lines[end:]]
        items_at = [ln for ln in lines[start + 1 : end] if ln.lstrip().startswith("- ")]
        if not value and items_at:
            indent = items_at[0][: len(items_at[0]) - len(items_at[0].lstrip())]
            block = [f"{indent}- {item}{nl}" for item in _flow_items(flow)]
            return [*lines[:end], *block, *lines[end:]]
        existing = [str(v) for v in current] if isinstance(current, list) else ([] if current is None else [str(current)])
        return lines[:start] + _dumped(key, existing + items, nl) + lines[end:]

    return _edit_frontmatter(text, nl, change)


def _flow_items(flow: str) -> list[str]:
    """The items of a flow list dump_yaml wrote, each as written (quoted where it must be)."""
    import yaml  # noqa: PLC0415

    node = yaml.compose(flow)
    items = node.value if isinstance(node, yaml.SequenceNode) else []
    return [flow[item.start_mark.index : item.end_mark.index] for item in items]


# -- the timeline ---------------------------------------------------------------------------------

def _add_timeline(text: str, rows: list[tuple[str, str]], nl: str, *, into_section: bool) -> str:
    head = frontmatter_block(text)
    body = text[len(head) :]
    new = "".join(f"- {d}: {s}{nl}" for d, s in rows)
    lines = body.splitlines(keepends=True)
    start = last = None
    level = 0
    for i, line in enumerate(lines if into_section else []):
        h = _HEADING.match(line.rstrip("\r\n"))
        if h:
            if start is None and h.group(2).strip().lower() == "timeline":
                start, last, level = i, i, len(h.group(1))
                continue
            if start is not None and len(h.group(1)) <= level:
                break
        elif start is not None and _TIMELINE_ROW.match(line):
            last = i
    if last is not None:
        if not lines[last].endswith("\n"):
            lines[last] += nl
        return head + "".join(lines[: last + 1]) + new + "".join(lines[last + 1 :])
    tail = body if not body or body.endswith("\n") else body + nl
    return head + tail + (nl if tail.strip() else "") + "## Timeline" + nl + new


def dump_yaml(data: dict) -> str:
    """Block style, except lists of plain values, which stay on one line as people write them (`tags: [a, b]`)."""
    import yaml  # noqa: PLC0415 - only export and write-back write YAML

    class Dumper(yaml.SafeDumper):
        pass

    def represent_list(dumper: yaml.SafeDumper, items: list[object]) -> yaml.Node:
        flat = all(isinstance(v, (str, int, float, bool)) or v is None for v in items)
        return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flat)

    Dumper.add_representer(list, represent_list)
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1_000_000, default_flow_style=False)


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if str(value).strip() else []


def _declared_links(declared: object) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if isinstance(declared, dict):
        for link_type, targets in declared.items():
            out[str(link_type)] = _as_list(targets)
    return out
