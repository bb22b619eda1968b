"""What `sync --status` and `doctor` say about synced folders: pending work, lag, conflicts."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memverbs.server.sync import scan
from memverbs.server.sync.state import Folder, SyncState
from memverbs.server.timeparse import iso, now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.brain.factory import BrainLocation

HEARTBEAT_MS = 2_000


def watching(folder: Folder) -> bool:
    if not folder.watcher_pid or not folder.watcher_beat:
        return False
    if now_ms() - folder.watcher_beat > 5 * HEARTBEAT_MS:
        return False
    try:
        os.kill(folder.watcher_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def folder_status(brain: Brain, source: str, *, scan_files: bool = True) -> list[dict]:
    state = SyncState(brain, source)
    out = []
    now = now_ms()
    for folder in state.folders():
        known = state.files(folder)
        pending, oldest, present = 0, None, set()
        if scan_files and os.path.isdir(folder.root):
            for e in scan.walk(folder.root):
                if e.kind not in ("page", "facts"):
                    continue
                present.add(e.rel)
                prev = known.get(e.rel)
                try:
                    st = os.stat(e.path)
                except OSError:
                    continue
                if prev is None or (st.st_size, st.st_mtime_ns) != (prev.size, prev.mtime_ns):
                    pending += 1
                    mtime = st.st_mtime_ns // 1_000_000
                    oldest = mtime if oldest is None else min(oldest, mtime)
        deletes = len([r for r in known if r not in present]) if scan_files else 0
        conflicts = state.conflicts(folder)
        out.append(
            {
                "root": folder.root,
                "prefix": folder.prefix,
                "mode": folder.mode,
                "exists": os.path.isdir(folder.root),
                "files": len([f for f in known.values() if f.slug]),
                "watching": watching(folder),
                "watcher_pid": folder.watcher_pid,
                "last_pass_at": iso(folder.last_pass_at),
                "last_change_at": iso(folder.last_change_at),
                "pending_files": pending,
                "pending_deletes": deletes,
                "pending_write_back": len(brain.sync_due(source, folder.id)),
                "lag_ms": max(0, now - oldest) if oldest is not None else 0,
                "lag": _human(max(0, now - oldest)) if oldest is not None else "none",
                "conflicts": [
                    {"id": c["id"], "file": c["rel_path"], "slug": c["slug"], "detected_at": iso(c["detected_at"])} for c in conflicts
                ],
            }
        )
    return out


def _human(ms: int) -> str:
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def sync_checks(where: BrainLocation, source: str) -> list[tuple[str, str, str, str | None]]:
    """doctor's rows: one per synced or imported folder (lag, watcher, conflicts), read-only."""
    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415

    if where.exists() is False:
        return []
    try:
        brain = open_brain(where, read_only=True, pool_size=1)
    except MemverbsError:
        return []  # the brain's own check says why
    try:
        # A brain from before markdown folders has no sync tables (doctor never migrates).
        if not any(name.endswith("_markdown_sync_state") for name in brain.schema_status()["applied"]):
            return []
        rows = folder_status(brain, source)
    except MemverbsError as exc:
        return [("sync", "warn", f"cannot read the sync state: {getattr(exc, 'message', exc)}", "Run `memverbs doctor` again; if it persists, `memverbs init`.")]
    finally:
        brain.close()
    out: list[tuple[str, str, str, str | None]] = []
    for r in rows:
        name = f"sync {r['root']}"
        if not r["exists"]:
            out.append((name, "warn", "the folder is gone", f"Recreate {r['root']}, or ignore this if it was moved on purpose."))
            continue
        watch = "watched" if r["watching"] else "not watched"
        pending = r["pending_files"] + r["pending_deletes"] + r["pending_write_back"]
        detail = f"{r['mode']}, {watch}, {r['files']} files, lag {r['lag']}, {pending} pending"
        if r["conflicts"]:
            files = ", ".join(f"{c['file']} (#{c['id']})" for c in r["conflicts"][:5])
            out.append((name, "warn", f"{detail}; {len(r['conflicts'])} conflict(s): {files}",
                        "The file won each conflict; the brain's version is kept: see `memverbs sync --status --json`."))
        elif pending and r["mode"] == "sync" and not r["watching"]:
            out.append((name, "warn", detail, f"Run `memverbs sync {r['root']}` (or keep `memverbs sync --watch` running)."))
        else:
            out.append((name, "ok", detail, None))
    return out
