"""Kept packs: a session start's pack, given again to the next session start that asks for the same one.

A pack is decided by whom it is about (the configured entities, the user's, the project, what the
session already touched), the brain, and time (server/readout.py). When a session start builds one on
a SQLite brain, it is kept here with the brain's change stamp and the instant time alone would change
it (`good_until`, which readout computes from what the pack was chosen from). A later session start
asking for the same pack — same home, brain, source, project, settings, banked entities and memverbs —
is given it by the launcher's fast path (hooks/fastpath.py) while the stamp is unchanged and
`good_until` has not come, without opening the brain: a few indexed reads and the cursor's write on a
plain connection (server/brain/plain.py). Every write to what a pack reads moves the stamp, a forget
and a visibility edit included, so a kept pack never shows what was since forgotten or made private.

A pack with facts of its own session (the session arm) is not kept: another session's would differ.

One small JSON file per key under `$MEMVERBS_HOME/hooks/packs/`, mode 0600 like the session state
(it holds the pack's text, as the repeat-start copy beside the session state does); files idle for
`IDLE_SECONDS` are collected at a session start. Imports only what the fast path has loaded.
"""

from __future__ import annotations

import json
import os
import time

from memverbs.hooks.basics import write_private
from memverbs.hooks.state import sha256

FOLDER = "packs"
IDLE_SECONDS = 7 * 24 * 3600  # Until.KEEP_MS: no kept pack is good longer
FORMAT = 1  # what a file holds; a different one is not read


def key(brain: str, source: str, project: str | None, configured: str, user: str, banked: list[str]) -> str:
    """What decides a pack, beside the brain's content and time; and which memverbs decided it (its
    version and the modules that choose and write the pack's lines, by size and time)."""
    from memverbs import __version__  # noqa: PLC0415 - the package is loaded: the hook runs from it
    from memverbs.server import readout  # noqa: PLC0415

    here = os.path.dirname(readout.__file__)
    code = []
    for path in (readout.__file__, os.path.join(here, "verbs", "render.py"), os.path.join(here, "verbs", "cards.py")):
        try:
            st = os.stat(path)
            code.append([st.st_size, st.st_mtime_ns])
        except OSError:
            code.append(None)
    ask = [FORMAT, __version__, code, os.path.abspath(brain), source, project, configured, user, banked]
    return sha256(json.dumps(ask).encode()).hexdigest()[:32]


def path(root: str, name: str) -> str:
    return os.path.join(root, "hooks", FOLDER, f"{name}.json")


def load(root: str, name: str) -> dict | None:
    try:
        with open(path(root, name), encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("format") != FORMAT:
        return None
    return kept


def save(root: str, name: str, kept: dict) -> None:
    """Keep a pack (readout's record: its text, what it marks as shown, its stamp and `good_until`)."""
    if kept.get("session_facts") or not isinstance(kept.get("stamp"), int):
        return
    try:
        write_private(path(root, name), json.dumps(dict(kept, format=FORMAT)))
    except OSError:
        pass  # a read-only home builds each pack, as before


def good(kept: dict, stamp: int | None, now_ms: int) -> bool:
    """Whether a kept pack is still the pack a session start would build now."""
    return stamp is not None and kept.get("stamp") == stamp and now_ms < int(kept.get("good_until", 0))


def collect_idle(root: str, now: float | None = None) -> None:
    """Remove kept packs idle for `IDLE_SECONDS`."""
    now = now if now is not None else time.time()
    try:
        entries = list(os.scandir(os.path.join(root, "hooks", FOLDER)))
    except OSError:
        return
    for entry in entries:
        try:
            if now - entry.stat().st_mtime > IDLE_SECONDS:
                os.unlink(entry.path)
        except OSError:
            continue
