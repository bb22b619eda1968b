"""A synced folder's identity: a stable id kept in the folder itself, `.memverbs/folder.json`.

A path says where a folder is on one machine, not which folder it is: a teammate's folder at the
same path on another machine sharing the brain is another folder, and a folder moved or renamed
is still the same one. So a synced folder is known by the id in its `.memverbs/folder.json` plus
the host that syncs it (server/sync/state.py). The file is written once, atomically (a temp file
renamed into place, never through a symlink: server/files.py), next to the user's notes and never
over one of them; the walk skips `.memverbs/` like any hidden folder, without a word.

A folder that cannot take the file (read-only, or `.memverbs` is not a plain folder) is still
synced, known by its path as before folders had ids.
"""

from __future__ import annotations

import json
import re
import uuid

from memverbs.server.files import OutsideFolder, read_inside, replace_inside

FOLDER_DIR = ".memverbs"
IDENTITY_FILE = f"{FOLDER_DIR}/folder.json"
_ID = re.compile(r"^[0-9a-f]{32}$")


def read_id(root: str) -> str | None:
    """The folder's id, or None when it has none (or the file is not one memverbs wrote)."""
    try:
        data, _ = read_inside(root, IDENTITY_FILE, 64 * 1024)
        got = json.loads(data.decode("utf-8"))
    except (OutsideFolder, OSError, UnicodeDecodeError, ValueError):
        return None
    uid = got.get("id") if isinstance(got, dict) else None
    return uid if isinstance(uid, str) and _ID.match(uid) else None


def write_id(root: str, uid: str | None = None) -> str | None:
    """Give the folder a new id (or `uid` back, the one it lost); None when the folder cannot take the file."""
    uid = uid or uuid.uuid4().hex
    body = {"id": uid, "about": "memverbs sync: this folder's identity. Keep it with the folder; a copy of the folder needs none."}
    try:
        replace_inside(root, IDENTITY_FILE, (json.dumps(body, indent=2) + "\n").encode("utf-8"), make_dirs=True)
    except (OutsideFolder, OSError):
        return None
    return uid


def ensure_id(root: str) -> str | None:
    """The folder's id, given one on first use."""
    return read_id(root) or write_id(root)
