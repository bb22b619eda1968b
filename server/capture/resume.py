"""Where a capture takes up again: a checkpoint of the session read so far, beside its capture state.

A long transcript is checkpointed as it is read (engine.read_into: every few MB, at a point where
the session holds exactly what the transcript says up to there) and when it has been read to its
end. `$MEMVERBS_HOME/capture/sessions/<harness>-<session id>.resume.json` (mode 0600) holds the
position (a byte offset in a JSONL file, the next row of an OpenClaw store), what the transcript
said of the session (id, directory, start) and the session's state (session.py: every text in it
cleaned). So a capture stopped by its limits goes on from there next time, and a live session
captured at each `Stop` reads only what was added since.

A checkpoint is used only for the same transcript, unchanged up to its position: the same file
(device and inode) whose first bytes and bytes just before the position are the ones read (a
harness appends to its transcript; a rewritten one is another file); anything else, and the
capture starts over. opencode's store is always read whole: its tool rows change in place.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING

from memverbs.server.capture.reading import open_transcript
from memverbs.server.capture.session import Session
from memverbs.server.capture.transcript import Transcript, is_sqlite
from memverbs.server.private_files import write_private

if TYPE_CHECKING:
    from memverbs.server.capture.reports import Names
    from memverbs.server.capture.state import SessionState

VERSION = 1
_ENDS = 4096  # bytes at the file's start, and just before the position, that must be unchanged
_NOT_RESUMABLE = ("opencode",)


def checkpoint_path(state: SessionState) -> str:
    return state.path[: -len(".json")] + ".resume.json"


def save(state: SessionState, transcript: Transcript, session: Session) -> None:
    if transcript.harness in _NOT_RESUMABLE:
        return
    body = {
        "version": VERSION,
        "path": os.path.abspath(transcript.path),
        "harness": transcript.harness,
        "store_session": transcript.store_session,
        "position": transcript.resume_at,
        "identity": _identity(transcript.path, transcript.resume_at),
        "meta": {"session_id": transcript.session_id, "cwd": transcript.cwd, "started": transcript.started,
                 "skipped": transcript.skipped},
        "session": session.as_json(),
    }
    write_private(checkpoint_path(state), json.dumps(body))


def open_resumed(state: SessionState, path: str, harness: str | None, store_session: str | None, names: Names | None,
                 keep: int, digest: bool) -> tuple[Transcript, Session | None]:
    """The transcript at `path`, from where its checkpoint stopped, and the session as it was there; or
    from the start and None when there is no usable checkpoint."""
    saved = _load(state, path, harness, store_session)
    if saved is None:
        return open_transcript(path, harness, store_session), None
    t = open_transcript(path, saved["harness"], store_session, start=int(saved["position"]))
    meta = saved.get("meta") or {}
    t.session_id = meta.get("session_id") or t.session_id
    t.cwd, t.started = meta.get("cwd"), meta.get("started")
    t.skipped = int(meta.get("skipped") or 0)
    return t, Session.from_json(saved["session"], names, keep, digest)


def discard(state: SessionState) -> None:
    try:
        os.unlink(checkpoint_path(state))
    except OSError:
        pass


def _load(state: SessionState, path: str, harness: str | None, store_session: str | None) -> dict | None:
    try:
        with open(checkpoint_path(state), encoding="utf-8") as fh:
            saved = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("version") != VERSION or not isinstance(saved.get("session"), dict):
        return None
    if saved.get("path") != os.path.abspath(path) or (harness is not None and saved.get("harness") != harness):
        return None
    if saved.get("harness") in _NOT_RESUMABLE or saved.get("store_session") != store_session:
        return None
    position = saved.get("position")
    if not isinstance(position, int) or position < 0 or saved.get("identity") != _identity(path, position):
        return None
    return saved


def _identity(path: str, position: int) -> list:
    """What must be the same for a position to still mean the same place."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    if is_sqlite(path):
        return [st.st_dev, st.st_ino]  # rows are appended, never rewritten: the row number is the place
    if position > st.st_size:
        return []
    with open(path, "rb") as fh:
        head = fh.read(min(position, _ENDS))
        fh.seek(max(0, position - _ENDS))
        tail = fh.read(min(position, _ENDS))
    return [st.st_dev, st.st_ino, hashlib.sha256(head + b"\0" + tail).hexdigest()]
