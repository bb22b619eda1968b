"""Which gone note a new file is: a move keeps the note's page (its facts, aliases, links, history).

A folder says nothing about moves for sure: a one-shot pass sees only that some files are gone
and some are new, and even the watcher's events can split a move into a delete and a create
(inotify reports a move into a folder created a moment before as a delete, once it finds no
watch there: watchdog holds the half of a move for half a second before it gives up pairing it).
So a new file is matched against the notes that are gone from the folder, in this order:

1. **the same bytes** (content hash): the note moved unchanged;
2. **the same file name**, when exactly one gone note and exactly one new file have it: the note
   moved and was edited while nobody watched.

The one-shot pass knows every gone and new file at once (`PassMoves`); the watcher sees one new
file at a time and asks the sync state which notes of the folder are gone (`WatchMoves`), and holds
a delete for HOLD_S first, so a create that comes a moment after its delete still pairs with it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memverbs.server.sync.slugs import segment_slug

if TYPE_CHECKING:
    from memverbs.server.sync.state import FileState, Folder, SyncState

HOLD_S = 1.0  # how long the watcher keeps a deleted note's page, waiting for the file it may have become


def name_key(rel: str) -> str:
    """A note's file name as the slug rule reads it (`Standup Notes.md` and `standup-notes.md` are one name)."""
    return segment_slug(rel.rsplit("/", 1)[-1].removesuffix(".md").removesuffix(".MD"))


class Moves:
    """Gone notes a new file may be; `take` hands each out at most once."""

    def take(self, rel: str, digest: str) -> FileState | None:
        raise NotImplementedError

    def claim(self, rel: str) -> None:
        """The gone note at `rel` is accounted for otherwise (a rename to a name of the same slug)."""


class PassMoves(Moves):
    """A whole pass: every gone note and every new file are known before the first is applied."""

    def __init__(self, gone: dict[str, FileState], new: list[str]) -> None:
        self.by_hash: dict[str, list[FileState]] = {}
        for f in gone.values():
            self.by_hash.setdefault(f.file_hash, []).append(f)
        self.taken: set[str] = set()  # gone notes that turned out to be moves, not deletes
        gone_names: dict[str, list[FileState]] = {}
        for f in gone.values():
            gone_names.setdefault(name_key(f.rel_path), []).append(f)
        new_names: dict[str, list[str]] = {}
        for rel in new:
            new_names.setdefault(name_key(rel), []).append(rel)
        # A name pairs only when it is unambiguous on both sides: one `todo.md` gone, one `todo.md` new.
        self.by_name = {
            rels[0]: gone_names[key][0] for key, rels in new_names.items() if len(rels) == 1 and len(gone_names.get(key, ())) == 1
        }

    def take(self, rel: str, digest: str) -> FileState | None:
        for f in self.by_hash.get(digest, ()):
            if f.rel_path not in self.taken:
                self.taken.add(f.rel_path)
                return f
        named = self.by_name.get(rel)
        if named is not None and named.rel_path not in self.taken:
            self.taken.add(named.rel_path)
            return named
        return None

    def claim(self, rel: str) -> None:
        self.taken.add(rel)


class WatchMoves(Moves):
    """The watcher: the folder's notes whose files are gone now (a delete pending or held), read when asked."""

    def __init__(self, state: SyncState, folder: Folder) -> None:
        self.state, self.folder = state, folder
        self._known: list[FileState] | None = None  # read once per batch of changes, only if a new file comes
        self._hints: dict[str, str] = {}  # new → old, from the observer's move events

    def hint(self, new: str, old: str) -> None:
        self._hints[new] = old

    def take(self, rel: str, digest: str) -> FileState | None:
        old = self._hints.pop(rel, None)
        if old is not None and not self._exists(old):
            f = self.state.file(self.folder, old)
            if f is not None and f.slug:
                self.taken(f)
                return f
        if self._known is None:
            self._known = [f for f in self.state.files(self.folder).values() if f.slug]
        known = [f for f in self._known if f.rel_path != rel]
        same = [f for f in known if f.file_hash == digest and not self._exists(f.rel_path)]
        if same:
            self.taken(same[0])
            return same[0]
        named = [f for f in known if name_key(f.rel_path) == name_key(rel)]
        gone = [f for f in named if not self._exists(f.rel_path)]
        if len(gone) == 1 and len(named) == 1:
            self.taken(gone[0])
            return gone[0]
        return None

    def taken(self, f: FileState) -> None:
        self.claim(f.rel_path)

    def claim(self, rel: str) -> None:
        if self._known is not None:
            self._known = [k for k in self._known if k.rel_path != rel]

    def _exists(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.folder.root, rel))
