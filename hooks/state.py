"""Per-session hook state: the entities a session touched, and when it last had a heartbeat.

One small JSON file per (harness, session) under `$MEMVERBS_HOME/hooks/sessions/`,
written atomically. It holds slugs, times and digests of what was injected —
never fact text. Files idle for 7 days are collected at session start.

The one exception is a session start's pack, kept beside it (`<key>.pack`, mode 0600, in
the home that holds the brain it came from) for `REPEAT_START_MS`: a harness that announces
one session twice (OpenClaw's Gateway fires session_start twice, 11–17 s apart, to separate
plugin instances) gets the same pack again without a second build. Stale packs are removed
at the next session start.
"""

from __future__ import annotations

import json
import os
import time

from memverbs.server.private_files import write_private
from memverbs.server.record import Record

# Not `typing.TYPE_CHECKING`: the prompt hook's cheap path (hooks/fastpath.py) loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

try:  # CPython's own SHA-256: hashlib would load OpenSSL and blake2 too, ~4 ms of a cold hook
    from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.11; typeshed has no stub
except ImportError:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12 and later
    except ImportError:
        from hashlib import sha256

IDLE_SECONDS = 7 * 24 * 3600
REPEAT_START_MS = 120_000
PACK_SUFFIX = ".pack"
MAX_BANKED = 16
MAX_SEEN = 256


class SessionState(Record):
    __slots__ = ("cursor_set", "entities", "last_heartbeat_ms", "packed", "path", "pending", "seen")
    path: str
    entities: list[str]
    last_heartbeat_ms: int
    seen: list[str]  # short digests of what was already injected
    cursor_set: bool  # a remote brain's delta cursor for this session exists (local brains are asked)
    packed: bool  # the model has been shown a pack since the start or the last compaction
    # Slugs a prompt named that wait for the next moment whose output reaches the model (Grok drops a
    # prompt hook's output: they go out with its next PostToolUse). Slugs only, never the prompt.
    pending: list[str]

    def __init__(self, path: str, entities: list[str] | None = None, last_heartbeat_ms: int = 0,
                 seen: list[str] | None = None, cursor_set: bool = False, packed: bool = False,
                 pending: list[str] | None = None) -> None:
        super().__init__(path=path, entities=[] if entities is None else entities,
                         last_heartbeat_ms=last_heartbeat_ms, seen=[] if seen is None else seen,
                         cursor_set=cursor_set, packed=packed, pending=[] if pending is None else pending)

    @classmethod
    def load(cls, root: str, harness: str, session_id: str) -> SessionState:
        key = sha256(f"{harness}\0{session_id}".encode()).hexdigest()[:32]
        path = os.path.join(root, f"{key}.json")
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            entities = [e for e in data.get("entities", []) if isinstance(e, str)]
            seen = [s for s in data.get("seen", []) if isinstance(s, str)]
            pending = [s for s in data.get("pending", []) if isinstance(s, str)]
            return cls(
                path, entities[:MAX_BANKED], int(data.get("last_heartbeat_ms", 0)), seen[-MAX_SEEN:],
                data.get("cursor_set") is True, data.get("packed") is True, pending[:MAX_BANKED],
            )
        except (OSError, ValueError, TypeError, AttributeError):
            return cls(path)

    def bank(self, slugs: list[str]) -> None:
        """Most recent first, deduplicated, bounded."""
        merged = [s for s in slugs if s] + [e for e in self.entities if e not in slugs]
        self.entities = list(dict.fromkeys(merged))[:MAX_BANKED]

    def given(self, key: str) -> bool:
        """Whether what `key` names was injected in this session already."""
        return sha256(key.encode()).hexdigest()[:16] in self.seen

    def unseen(self, items: list[dict], key: Callable[[dict], str]) -> list[dict]:
        """The items not injected before in this session; marks them as injected now."""
        fresh = []
        known = set(self.seen)
        for item in items:
            digest = sha256(key(item).encode()).hexdigest()[:16]
            if digest not in known:
                known.add(digest)
                self.seen.append(digest)
                fresh.append(item)
        self.seen = self.seen[-MAX_SEEN:]
        return fresh

    @property
    def pack_path(self) -> str:
        return os.path.splitext(self.path)[0] + PACK_SUFFIX

    def recent_pack(self, now_ms: int) -> str | None:
        """The pack this session's start printed less than `REPEAT_START_MS` ago, if any."""
        try:
            if now_ms - os.stat(self.pack_path).st_mtime_ns // 1_000_000 > REPEAT_START_MS:
                return None
            with open(self.pack_path, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, ValueError):
            return None

    def keep_pack(self, text: str) -> None:
        write_private(self.pack_path, text)

    def save(self) -> None:
        data = {
            "entities": self.entities,
            "last_heartbeat_ms": self.last_heartbeat_ms,
            "seen": self.seen,
            "cursor_set": self.cursor_set,
            "packed": self.packed,
            "pending": self.pending,
            "updated_ms": int(time.time() * 1000),
        }
        write_private(self.path, json.dumps(data))


def collect_idle(root: str, now: float | None = None) -> None:
    """Remove session files idle for `IDLE_SECONDS`, and packs past their repeat window."""
    now = now if now is not None else time.time()
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return
    for entry in entries:
        limit = REPEAT_START_MS / 1000 if entry.name.endswith(PACK_SUFFIX) else IDLE_SECONDS
        try:
            if now - entry.stat().st_mtime > limit:
                os.unlink(entry.path)
        except OSError:
            continue
