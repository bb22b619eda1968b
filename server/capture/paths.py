"""Where capture keeps its state under the home: one small file per captured session.

Stdlib `os` only: the capture hook reads a state file's age on every turn's end (hooks/capture.py),
and the worker writes it (server/capture/state.py).
"""

from __future__ import annotations

import os

STATE_DIR = ("capture", "sessions")


def state_file(root: str, harness: str, session_id: str) -> str:
    """Where the worker records what it captured of a session (its name is safe for any session id)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:120]
    return os.path.join(root, *STATE_DIR, f"{harness}-{safe}.json")
