"""The slug a file gets from its path: documented in docs/sync.md and never changed lightly.

`people/Alice Example.md` → `people/alice-example`: the `.md` suffix goes, and each
path segment is lowercased, Greek and Cyrillic are spelled in Latin, accents are
stripped, the letters of other scripts are kept (`日本.md` → `日本`), every run of
anything else but `a-z 0-9 _ -` becomes one `-`, and leading `_`/`-` and trailing `-`
are trimmed. A segment with nothing left (`🎉.md`) becomes `x-` and 8 hex digits of its
SHA-1, so it is still stable. A folder's slug prefix goes in front: `notes` + `a/b.md` →
`notes/a/b`. The rule maps every slug memverbs writes back to itself, which is what
makes export → import → export byte-identical.
"""

from __future__ import annotations

from memverbs.server.names import path_segment_slug, valid_slug

segment_slug = path_segment_slug  # the rule lives with the other names (links match files by it)


def slug_for_path(rel_path: str, prefix: str = "") -> str:
    """The slug of a markdown file at `rel_path` (posix, relative to its folder)."""
    stem = rel_path[:-3] if rel_path.lower().endswith(".md") else rel_path
    slug = "/".join(segment_slug(seg) for seg in stem.split("/") if seg)
    return f"{prefix}/{slug}" if prefix else slug


def path_for_slug(slug: str, prefix: str = "") -> str:
    """The file a page is written to: the inverse of `slug_for_path` for every valid slug."""
    if prefix:
        slug = slug[len(prefix) + 1 :]
    return slug + ".md"


def note_name(rel_path: str) -> str:
    """The name a note's file gives it (`Plugins/Command palette.md` → `Command palette`): its title
    when the note declares none (docs/sync.md)."""
    name = rel_path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def valid_prefix(prefix: str) -> bool:
    return prefix == "" or valid_slug(prefix)
