"""Whether a synced folder is there to read: a folder that is not deletes nothing.

A note gone from a folder that is there was deleted by its person, and its page goes too. A folder
that is not there says nothing about its notes: it was removed or renamed whole, its drive is not
mounted, its permissions changed, or another folder now stands at its path. Then every note would
look deleted at once, so a pass (and the watcher) keeps every page as it is, marks the folder
unavailable with the reason (`sync --status`, `doctor`), and takes the folder up again once it is
back: its notes are then compared with their pages as after any pause.

A folder is not there when its path is missing or not a folder, when it cannot be listed, when its
`.memverbs/folder.json` names another folder, or when it lost that file and holds no note at all
while its pages came from notes (an empty mount point, a folder made anew at the old path).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from memverbs.server.sync import identity

if TYPE_CHECKING:
    from memverbs.server.sync.scan import Entry
    from memverbs.server.sync.state import Folder


def why_unavailable(folder: Folder, entries: list[Entry] | None = None, *, had_notes: bool = True) -> str | None:
    """Why `folder` cannot be read now, in words; None when it can. `entries`: its walk, when done
    (then an empty folder that lost its identity is not there either, if it `had_notes`)."""
    root = folder.root
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return f"the folder is gone from {root}"
    except OSError as exc:
        return f"cannot reach the folder: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{root} is no longer a folder"
    try:
        with os.scandir(root) as it:
            next(it, None)
    except OSError as exc:
        return f"cannot read the folder: {exc.strerror}"
    if folder.uid is None:
        return None
    found = identity.read_id(root)
    if found is not None and found != folder.uid:
        return f"another folder stands at {root} now (its {identity.IDENTITY_FILE} names another folder)"
    if found is None and entries is not None and had_notes and not any(e.kind in ("page", "facts") for e in entries):
        return (f"{root} is empty and has lost its {identity.IDENTITY_FILE}: a drive that is not mounted, or a folder "
                "made anew at its path")
    return None
