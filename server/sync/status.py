"""What `sync --status` and `doctor` say about synced folders: pending work, lag, conflicts."""

from __future__ import annotations

import os

from memverbs.server.sync import scan
from memverbs.server.sync.state import SyncState
from memverbs.server.timeparse import iso, now_ms

HEARTBEAT_MS = 2_000


def watching(folder) -> bool:
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


def folder_status(brain, source: str, *, scan_files: bool = True) -> list[dict]:
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


def sync_checks(brain_path, source: str) -> list[tuple]:
    """doctor's rows: one per synced or imported folder (lag, watcher, conflicts), read-only."""
    import sqlite3  # noqa: PLC0415

    from memverbs.server.brain.sqlite import SqliteBrain  # noqa: PLC0415

    if not brain_path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{brain_path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return []
    try:
        db.row_factory = sqlite3.Row
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sync_folders'").fetchone() is None:
            return []
        rows = folder_status(SqliteBrain(db, brain_path), source)
    except sqlite3.Error as exc:
        return [("sync", "warn", f"cannot read the sync state: {exc}", "Run `memverbs doctor` again; if it persists, `memverbs init`.")]
    finally:
        db.close()
    out = []
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
            out.append((name, "ok", detail))
    return out
