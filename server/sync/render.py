"""A page as a markdown file: the one rendering `export` and write-back use.

The file is canonical, so rendering what importing it produced gives the same bytes:

    ---
    title: …            always (the page's title, wherever it came from)
    type: …             when the page has one
    visibility: private when private
    aliases: […]        the frontmatter's aliases, then those added by hand (`add_alias`)
    links: {type: […]}  the frontmatter's links, then those added by hand (`add_link`, not mentions)
    …                   every other frontmatter key, in its original order (tags, dates, …)
    ---
    <body as stored, fences included>
    ## Timeline          only when entries were added by hand (`add_timeline_entry`)
    - YYYY-MM-DD: …

What was added by hand becomes part of the file, so after one export → import it is
declared by the markdown like everything else.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memverbs.server.pages.markdown import sealed_body

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

_CANONICAL = ("title", "type", "visibility", "aliases", "links")


def render_page(brain: Brain, source: str, slug: str, *, include_private: bool = True) -> str | None:
    """The page's file content, or None when it is missing (or private and not asked for)."""
    row = brain.page(source, slug, allow_private=include_private)
    if row is None:
        return None
    stored = json.loads(row["frontmatter"] or "{}")
    fm: dict = {"title": row["title"] or slug}
    if row["type"]:
        fm["type"] = row["type"]
    if row["visibility"] == "private":
        fm["visibility"] = "private"
    aliases = _as_list(stored.get("aliases"))
    for alias in brain.manual_aliases(source, slug):
        if alias not in aliases:
            aliases.append(alias)
    if aliases:
        fm["aliases"] = aliases
    links = _links(stored.get("links"), brain.manual_links(source, slug))
    if links:
        fm["links"] = links
    for key, value in stored.items():
        if key not in _CANONICAL:
            fm[key] = value
    # Cut private rows leave a marker, so importing the file back puts the brain's rows there
    # instead of dropping them (docs/sync.md, "Private material").
    body = row["body"] if include_private else sealed_body(row["body"])
    manual = [(d, " ".join(text.split())) for d, text in brain.manual_timeline(source, slug)]
    if manual:
        if body and not body.endswith("\n"):
            body += "\n"
        body += ("\n" if body else "") + "## Timeline\n" + "".join(f"- {d}: {s}\n" for d, s in manual)
    return "---\n" + dump_yaml(fm) + "---\n" + body


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


def _links(declared: object, manual: list[tuple[str, str]]) -> dict:
    out: dict[str, list[str]] = {}
    if isinstance(declared, dict):
        for link_type, targets in declared.items():
            out[str(link_type)] = _as_list(targets)
    for link_type, to_slug in manual:
        targets = out.setdefault(link_type, [])
        if to_slug not in targets:
            targets.append(to_slug)
    return out
