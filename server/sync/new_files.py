"""Brain → folder for pages born in the brain: a page an agent (MCP `put_page`), the CLI or the
inspector creates in a synced folder's slug space gets a file of its own.

**When.** With write-back: at the end of every `memverbs sync DIR` pass, and by a running
`sync --watch` on its write-back tick (every half second), so the file appears about as soon
as the page. Never inside the page write itself: the page operation does not know on which
machine a folder lives (on a shared brain the writer is often another host, or an HTTP server),
and the host that syncs a folder is the one that writes its files.

**Which pages.** Live pages under the folder's prefix that no synced file of the source holds;
for a folder with no prefix (it claims every slug), only pages created since the folder was first
synced, so syncing a folder never dumps the whole brain into it. A page under a more specific
folder's prefix is that folder's.

**Where.** The path a person would give it: the slug's folders below the folder (an existing
folder whose name has that slug, `Projects/` for `projects`, rather than a second one), and a
file name from the page's title (`Q3 Plan.md`), or the slug's last part when the title would not
map back to the same slug. The file is created with `server/files.py`'s `create_inside`: written
to a temp file and linked in, never over anything, never through a symlink. A file already there
that maps to the same slug (one not applied yet, or failing) is never overwritten: the collision
is recorded as a conflict (the brain's version kept, the file winning as it does for any note
both sides changed), once.
"""

from __future__ import annotations

import os
import re
import weakref
from typing import TYPE_CHECKING

from memverbs.server.files import OutsideFolder, create_inside, open_dir_inside, stat_inside
from memverbs.server.sync import scan
from memverbs.server.sync.render import render_page
from memverbs.server.sync.slugs import segment_slug, slug_for_path
from memverbs.server.sync.state import FileState, Folder
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.report import Report

# Characters a note's name should not hold: path separators, what Windows or macOS refuse, and what
# breaks an Obsidian [[link]] to the file (# ^ [ ] |).
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|#^\[\]]+')
NAME_BYTES = 120

# What each pass (a watcher keeps one) already said about a page that could not get a file, by the
# page's stamp: a watcher looks back a minute every half second, and one refusal is news once.
_SAID: weakref.WeakKeyDictionary[FolderPass, dict[str, int]] = weakref.WeakKeyDictionary()


def file_new_pages(fp: FolderPass, report: Report, since: int = 0) -> None:
    """Give every page of the folder's slug space that has no file one (or record the collision)."""
    from memverbs.server.sync.importer import file_hash  # noqa: PLC0415 - the importer imports write-back, which imports this

    if fp.folder.id < 0:
        return  # a dry run's folder that was never synced
    rows = unfiled(fp.brain, fp.source, fp.folder, fp.state.folders(), since)
    if not rows:
        return
    own = fp.folder.prefix
    said = _SAID.setdefault(fp, {})

    def refuse(row: Row, where: str, why: str) -> None:
        if said.get(row["slug"]) != row["updated_at"]:
            said[row["slug"]] = row["updated_at"]
            report.add("errors", where, f"no file made for the new page: {why}")

    for row in rows:
        slug = row["slug"]
        try:
            rel, clash = place(fp.folder.root, own, slug, row["title"])
        except OutsideFolder as exc:
            refuse(row, slug, exc.message)
            continue
        except OSError as exc:
            refuse(row, slug, str(exc.strerror))
            continue
        if rel is None:
            refuse(row, slug, f"{clash} is in the way (not a note)")
            continue
        page = fp.brain.page(fp.source, slug)  # read before the render: a write after it is due again later
        if page is None:
            continue
        text = render_page(fp.brain, fp.source, slug)
        if text is None:
            continue
        if clash is not None:
            _collision(fp, report, clash, slug, text)
            continue
        if fp.dry_run:
            report.add("written_back", rel)
            continue
        data = text.encode("utf-8")
        try:
            create_inside(fp.folder.root, rel, data)
            st = stat_inside(fp.folder.root, rel)
        except FileExistsError:
            _collision(fp, report, rel, slug, text)  # saved there a moment ago: the user's file, never replaced
            continue
        except OutsideFolder as exc:
            refuse(row, rel, exc.message)
            continue
        except OSError as exc:
            refuse(row, rel, str(exc.strerror))
            continue
        fp.state.record(fp.folder, FileState(rel, slug, file_hash(data), st.st_size, st.st_mtime_ns, page["updated_at"], now_ms()))
        report.add("written_back", rel)


def unfiled(brain: Brain, source: str, folder: Folder, folders: list[Folder], since: int = 0) -> list[Row]:
    """The folder's pages that have no file yet (`sync --status` counts them as pages to write back),
    less those under a more specific folder's prefix, which are that folder's."""
    own = folder.prefix
    nested = [f.prefix for f in folders if f.id != folder.id and len(f.prefix) > len(own) and (not own or f.prefix.startswith(own + "/"))]
    return [r for r in brain.sync_unfiled(source, folder.id, since) if not any(r["slug"].startswith(p + "/") for p in nested)]


def _collision(fp: FolderPass, report: Report, rel: str, slug: str, text: str) -> None:
    """A file that maps to the page's slug is there already: the brain's version is kept as a conflict
    (once: a conflict for that file and page, open or settled, is not recorded again)."""
    if fp.dry_run:
        report.conflicts.append((rel, slug, "file_won"))
        return
    seen = fp.state.conflicts(fp.folder, open_only=False)
    if any(c["rel_path"] == rel and c["slug"] == slug for c in seen):
        return
    fp.state.add_conflict(fp.folder, rel, slug, text)
    report.conflicts.append((rel, slug, "file_won"))


def place(root: str, prefix: str, slug: str, title: str | None) -> tuple[str | None, str | None]:
    """(the new file's path, a path in the way or None). The path is None when something that is not a
    note holds the name."""
    parts = (slug[len(prefix) + 1 :] if prefix else slug).split("/")
    folder = ""
    for seg in parts[:-1]:
        folder = _join(folder, _existing_dir(root, folder, seg) or seg)
    last = parts[-1]
    name = file_name(title or "")
    if not name or slug_for_path(_join(folder, name + ".md"), prefix) != slug:
        name = last
    rel = _join(folder, name + ".md")
    for entry, is_dir in _entries(root, folder):
        if entry.casefold() == (name + ".md").casefold() and (is_dir or not scan.is_markdown(entry)):
            return None, _join(folder, entry)
        if not is_dir and not entry.startswith(".") and scan.is_markdown(entry) and segment_slug(entry[:-3]) == last:
            return rel, _join(folder, entry)  # maps to the same slug: that note is the page's
    return rel, None


def file_name(title: str) -> str:
    """A title as a note's name: characters a file name or a wikilink cannot hold become spaces, at most
    NAME_BYTES bytes, no leading or trailing dot or space."""
    name = " ".join(_UNSAFE.sub(" ", title).split()).strip(" .")
    while len(name.encode("utf-8")) > NAME_BYTES:
        name = name[:-1].rstrip(" .")
    return name


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _entries(root: str, folder: str) -> list[tuple[str, bool]]:
    """(name, is a real folder) of `folder`'s entries, read without following a link; [] when it does not exist."""
    try:
        fd = open_dir_inside(root, folder)
    except FileNotFoundError:
        return []
    try:
        with os.scandir(fd) as it:
            return sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
    finally:
        os.close(fd)


def _existing_dir(root: str, folder: str, seg: str) -> str | None:
    """The folder below `folder` whose name has the slug `seg` (the exact name first), or None."""
    names = [n for n, is_dir in _entries(root, folder) if is_dir and not n.startswith(".") and segment_slug(n) == seg]
    return seg if seg in names else (names[0] if names else None)
