"""What was captured of each session: one small file per session, so an unchanged transcript is not read again.

`$MEMVERBS_HOME/capture/sessions/<harness>-<session id>.json` (mode 0600) holds the transcript's
size and mtime when it was last captured; for a session inside a SQLite store (OpenClaw's,
opencode's), the session's own signature there (stores.session_signature), since the store's file
changes whenever any session is written. The hook reads only the file's own mtime (a `Stop`
within a few minutes of the last capture is skipped: hooks/capture.py). A per-session lock
beside it keeps two workers (a `Stop` and the `SessionEnd` right after it) from capturing the
same session at once: the second waits, then finds the transcript unchanged.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

from memverbs.server.capture.paths import state_file
from memverbs.server.capture.stores import session_signature
from memverbs.server.private_files import write_private


class SessionState:
    def __init__(self, root: str, harness: str, session_id: str) -> None:
        self.path = state_file(root, harness, session_id)
        self.harness, self.session_id = harness, session_id

    def _stamp(self, transcript: str) -> list:
        signature = session_signature(self.harness, transcript, self.session_id)
        if signature is not None:
            return signature
        st = os.stat(transcript)
        try:  # a SQLite store it could not read changes in its write-ahead log long before its main file
            wal = os.stat(transcript + "-wal")
        except OSError:
            return [st.st_size, st.st_mtime_ns]
        return [st.st_size, st.st_mtime_ns, wal.st_size, wal.st_mtime_ns]

    def unchanged(self, transcript: str) -> bool:
        try:
            with open(self.path, encoding="utf-8") as fh:
                saved = json.load(fh)
            return saved.get("stamp") == self._stamp(transcript) and saved.get("path") == os.path.abspath(transcript)
        except (OSError, ValueError, AttributeError):
            return False

    def save(self, transcript: str, stamp: list, counts: dict, llm_spent: dict | None = None) -> None:
        spent = llm_spent if llm_spent is not None else self.llm_spent()
        write_private(self.path, json.dumps({"path": os.path.abspath(transcript), "stamp": stamp, "facts": counts, "llm": spent}))

    def llm_spent(self) -> dict:
        """What the optional LLM pass has spent on this session so far (server/capture/llm.py's Spend)."""
        try:
            with open(self.path, encoding="utf-8") as fh:
                spent = json.load(fh).get("llm")
        except (OSError, ValueError, AttributeError):
            return {}
        return spent if isinstance(spent, dict) else {}

    def stamp(self, transcript: str) -> list:
        return self._stamp(transcript)

    @contextmanager
    def locked(self) -> Iterator[None]:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = os.open(self.path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # bounded by the worker's alarm
            yield
        finally:
            os.close(fd)
