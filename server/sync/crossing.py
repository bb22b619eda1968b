"""A note moved from one synced folder into another (a teammate's, or another of one's own): its page
goes with it, facts, links and history, whichever folder's pass sees the move first.

Within a folder a move is found by the notes gone and the files new in one pass (server/sync/moves.py).
Across folders the two halves are seen by two passes, perhaps by two people on two hosts, in either
order; each is matched by the note's exact bytes:

* **the folder it left sees it first** (`Crossing.moved_away`): the note is gone, and another folder now holds
  a file with its bytes under a slug of its own. The gone note's facts are refiled under that page
  (`move-facts`, audited) and links to it point there; then its page is deleted as any gone note's.
* **the folder it came to sees it first** (`Crossing.came_from`): a new note whose bytes are the text of a page a
  folder sync deleted lately (DELETED_WITHIN) and no folder holds now. That page moves to the new
  note's slug and is brought back, with its facts, links and history, instead of a new page beside it.

Each person moves only what is theirs to see: a page or fact private to someone else is neither seen
nor moved. The first half leaves what it cannot reach as any delete does; the second half, run later by
the note's old folder, refiles the rest (a page already moved is no obstacle: its facts follow).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row
    from memverbs.server.sync.state import FileState, Folder

DELETED_WITHIN = 7 * 86_400_000  # a note is taken back by its bytes this long after its page went


class Crossing:
    """One folder pass's view of notes crossing between synced folders."""

    def __init__(self, brain: Brain, source: str, folder: Folder) -> None:
        self.brain, self.source, self.folder = brain, source, folder
        self._deleted_lately: list[Row] | None = None  # read once per pass, when a new note first asks

    def moved_away(self, gone: FileState) -> str | None:
        """The gone note's bytes are a note of another folder now: refile what hangs off its page there;
        the slug it went to, or None when no other folder holds those bytes."""
        # Synced since this note last was: a note with the same bytes that was there all along is a copy, not it.
        there = [r for r in self.brain.sync_files_with_bytes(self.source, gone.file_hash)
                 if r["folder_id"] != self.folder.id and r["slug"] != gone.slug and r["synced_at"] >= gone.synced_at]
        if not there or self.brain.page(self.source, there[0]["slug"]) is None:
            return None
        to = str(there[0]["slug"])
        self.brain.move_facts(self.source, gone.slug, to, f"its note {gone.rel_path} moved to another synced folder", now_ms())
        self.brain.repoint_links(self.source, gone.slug, to)
        return to

    def came_from(self, digest: str) -> str | None:
        """The slug of a page a folder sync deleted lately whose text is these bytes, held by no folder now:
        the note moved here from another folder. None when there is none."""
        if self._deleted_lately is None:
            self._deleted_lately = self.brain.sync_deleted_pages(self.source, now_ms() - DELETED_WITHIN)
        for row in self._deleted_lately:
            text = row["markdown"]
            if text and hashlib.sha256(text.encode("utf-8")).hexdigest() == digest \
                    and not self.brain.sync_slug_files(self.source, row["slug"]):
                self._deleted_lately = [r for r in self._deleted_lately if r["slug"] != row["slug"]]
                return str(row["slug"])
        return None
