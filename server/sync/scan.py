"""Walking a folder for markdown: what is content, what is skipped, and why.

Skipped and said so: hidden folders and files (`.obsidian/`, `.git/`, `.trash/`; one
line per folder), files that are not `.md` (attachments), FIFOs, sockets and devices,
folders that cannot be read, and every symlink, to a file or a folder, pointing inside
the folder or out of it: a link is never followed (docs/sync.md). A link that points
inside names a file the walk reaches by its own path anyway; one that points outside
(`~/creds.txt`, `/proc/self/environ`) must never be read, let alone published.
Each folder is opened from its parent with O_NOFOLLOW (server/files.py), so a folder
swapped for a link mid-walk is not followed either.
Entries come out sorted, so two runs see files in the same order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from memverbs.server.files import OutsideFolder, open_dir_inside
from memverbs.server.sync.identity import FOLDER_DIR

FACTS_FILE = "memverbs-facts.jsonl"
BACKUP_DIR = ".memverbs-backup"  # `export --full`'s tables (server/sync/backup.py): hidden, so a vault's tools pass it by


@dataclass(frozen=True)
class Entry:
    rel: str  # posix path relative to the folder
    path: str  # absolute path
    skip: str | None = None  # why this is not imported, or None for a markdown file
    kind: str = "page"  # page | facts | skipped | error


def is_markdown(name: str) -> bool:
    return name.lower().endswith(".md") and not name.startswith(".")


def walk(root: str, under: str = "") -> Iterator[Entry]:
    """Every entry below `root`, or below its folder `under` (a path inside it); `rel` is always from `root`."""
    root = os.path.abspath(root)
    yield from _walk(root, under.strip("/"))


ATTACHMENT = "not markdown (attachment)"
SYMLINK = "symlink, not followed (memverbs reads only the folder's own files)"


def _walk(root: str, rel: str) -> Iterator[Entry]:
    folder = os.path.join(root, rel) if rel else root
    try:
        fd = open_dir_inside(root, rel)
    except OutsideFolder:  # swapped for a link since its parent was listed
        yield Entry(rel, folder, SYMLINK, "skipped")
        return
    except OSError as exc:
        yield Entry(rel or ".", folder, f"cannot read folder: {exc.strerror}", "error")
        return
    try:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield Entry(rel or ".", folder, f"cannot read folder: {exc.strerror}", "error")
        return
    finally:
        os.close(fd)
    for e in entries:
        child_rel = f"{rel}/{e.name}" if rel else e.name
        path = os.path.join(folder, e.name)
        try:
            is_link = e.is_symlink()
            is_dir = not is_link and e.is_dir(follow_symlinks=False)
            is_file = not is_link and not is_dir and e.is_file(follow_symlinks=False)
        except OSError as exc:
            yield Entry(child_rel, path, f"cannot stat: {exc.strerror}", "error")
            continue
        if not rel and e.name == BACKUP_DIR and is_dir:
            continue  # a full export's backup: import restores it before the walk (server/sync/restore.py)
        if not rel and e.name == FOLDER_DIR:
            continue  # memverbs's own: the folder's identity (server/sync/identity.py), not content nor news
        if e.name.startswith("."):
            # .obsidian/, .git/, .trash/, .DS_Store: not content. One line for a folder, never one per file in it.
            what = "hidden folder, not content" if is_dir else "hidden file, not content"
            yield Entry(child_rel + ("/" if is_dir else ""), path, what, "skipped")
        elif is_link:
            yield Entry(child_rel, path, SYMLINK, "skipped")
        elif is_dir:
            yield from _walk(root, child_rel)
        elif not is_file:
            yield Entry(child_rel, path, "not a regular file (a FIFO, socket or device)", "skipped")
        elif not rel and e.name == FACTS_FILE:
            yield Entry(child_rel, path, kind="facts")
        elif is_markdown(e.name):
            yield Entry(child_rel, path)
        else:
            yield Entry(child_rel, path, ATTACHMENT, "skipped")
