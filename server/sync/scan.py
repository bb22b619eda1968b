"""Walking a folder for markdown: what is content, what is skipped, and why.

Skipped and said so: hidden folders and files (`.obsidian/`, `.git/`, `.trash/`; one
line per folder), files that are not `.md` (attachments), symlink loops, folders that
cannot be read.
Symlinked folders are followed once (a loop is reported, not walked forever).
Entries come out sorted, so two runs see files in the same order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

FACTS_FILE = "memverbs-facts.jsonl"


@dataclass(frozen=True)
class Entry:
    rel: str  # posix path relative to the folder
    path: str  # absolute path
    skip: str | None = None  # why this is not imported, or None for a markdown file
    kind: str = "page"  # page | facts | skipped | error


def is_markdown(name: str) -> bool:
    return name.lower().endswith(".md") and not name.startswith(".")


def walk(root: str) -> Iterator[Entry]:
    root = os.path.abspath(root)
    seen: set[tuple[int, int]] = set()
    yield from _walk(root, "", seen)


def _walk(folder: str, rel: str, seen: set[tuple[int, int]]) -> Iterator[Entry]:
    try:
        st = os.stat(folder)
    except OSError as exc:
        yield Entry(rel or ".", folder, f"cannot read folder: {exc.strerror}", "error")
        return
    key = (st.st_dev, st.st_ino)
    if key in seen:
        yield Entry(rel or ".", folder, "symlink loop: this folder was already walked", "skipped")
        return
    seen.add(key)
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield Entry(rel or ".", folder, f"cannot read folder: {exc.strerror}", "error")
        return
    for e in entries:
        child_rel = f"{rel}/{e.name}" if rel else e.name
        if e.name.startswith("."):
            # .obsidian/, .git/, .trash/, .DS_Store: not content. One line for a folder, never one per file in it.
            what = "hidden folder, not content" if e.is_dir() else "hidden file, not content"
            yield Entry(child_rel + ("/" if e.is_dir() else ""), e.path, what, "skipped")
            continue
        try:
            is_dir = e.is_dir(follow_symlinks=True)
            is_file = not is_dir and e.is_file(follow_symlinks=True)
        except OSError as exc:
            yield Entry(child_rel, e.path, f"cannot stat: {exc.strerror}", "error")
            continue
        if is_dir:
            yield from _walk(e.path, child_rel, seen)
        elif not rel and e.name == FACTS_FILE:
            yield Entry(child_rel, e.path, kind="facts")
        elif is_file and is_markdown(e.name):
            yield Entry(child_rel, e.path)
        elif e.is_symlink() and not is_file:
            yield Entry(child_rel, e.path, "broken symlink", "skipped")
        else:
            yield Entry(child_rel, e.path, "not markdown (attachment)", "skipped")
