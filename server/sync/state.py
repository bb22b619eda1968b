"""Per-file sync state, kept in the brain itself (migration `0005_markdown_sync_state`).

A row per folder (root, slug prefix, mode, last pass, the watcher's heartbeat) and
per file (its slug, the hash/size/mtime last synced, and the page's `updated_at`
after that sync, which is how a later write from elsewhere is told apart from our
own). Each file's row is written right after its page, so a `kill -9` mid-pass
loses at most the file in hand: the next pass re-reads it and finds the page current.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memverbs.server.timeparse import now_ms


@dataclass
class Folder:
    id: int
    root: str
    prefix: str
    mode: str
    last_pass_at: int | None
    last_change_at: int | None
    watcher_pid: int | None
    watcher_beat: int | None


@dataclass
class FileState:
    rel_path: str
    slug: str
    file_hash: str
    size: int
    mtime_ns: int
    page_updated_at: int | None
    synced_at: int


def _folder(row) -> Folder:
    return Folder(
        row["id"], row["root"], row["slug_prefix"], row["mode"], row["last_pass_at"], row["last_change_at"],
        row["watcher_pid"], row["watcher_beat"],
    )


def _file(row) -> FileState:
    return FileState(
        row["rel_path"], row["slug"], row["file_hash"], row["size"], row["mtime_ns"], row["page_updated_at"], row["synced_at"]
    )


class SyncState:
    """The sync tables of one brain and source."""

    def __init__(self, brain, source: str) -> None:
        self.brain = brain
        self.source = source

    # -- folders -------------------------------------------------------------

    def folder(self, root: str, prefix: str, mode: str) -> Folder:
        """The folder's row, created on first use; `sync` upgrades an imported folder to synced."""
        root = os.path.realpath(root)
        with self.brain.write() as db:
            row = db.execute("SELECT * FROM sync_folders WHERE source_id = ? AND root = ?", (self.source, root)).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO sync_folders (source_id, root, slug_prefix, mode, created_at) VALUES (?, ?, ?, ?, ?)",
                    (self.source, root, prefix, mode, now_ms()),
                )
            else:
                new_mode = "sync" if "sync" in (mode, row["mode"]) else "import"
                db.execute("UPDATE sync_folders SET slug_prefix = ?, mode = ? WHERE id = ?", (prefix, new_mode, row["id"]))
            row = db.execute("SELECT * FROM sync_folders WHERE source_id = ? AND root = ?", (self.source, root)).fetchone()
        return _folder(row)

    def folders(self, mode: str | None = None) -> list[Folder]:
        sql, args = "SELECT * FROM sync_folders WHERE source_id = ?", [self.source]
        if mode:
            sql += " AND mode = ?"
            args.append(mode)
        return [_folder(r) for r in self.brain.query(sql + " ORDER BY root", tuple(args))]

    def pass_done(self, folder: Folder, changed: bool) -> None:
        now = now_ms()
        with self.brain.write() as db:
            db.execute("UPDATE sync_folders SET last_pass_at = ? WHERE id = ?", (now, folder.id))
            if changed:
                db.execute("UPDATE sync_folders SET last_change_at = ? WHERE id = ?", (now, folder.id))

    def changed(self, folder: Folder) -> None:
        with self.brain.write() as db:
            db.execute("UPDATE sync_folders SET last_change_at = ? WHERE id = ?", (now_ms(), folder.id))

    def heartbeat(self, folder: Folder, pid: int | None) -> None:
        with self.brain.write() as db:
            db.execute(
                "UPDATE sync_folders SET watcher_pid = ?, watcher_beat = ? WHERE id = ?",
                (pid, now_ms() if pid else None, folder.id),
            )

    # -- files ---------------------------------------------------------------

    def files(self, folder: Folder) -> dict[str, FileState]:
        rows = self.brain.query("SELECT * FROM sync_files WHERE folder_id = ?", (folder.id,))
        return {r["rel_path"]: _file(r) for r in rows}

    def file(self, folder: Folder, rel_path: str) -> FileState | None:
        row = self.brain.one("SELECT * FROM sync_files WHERE folder_id = ? AND rel_path = ?", (folder.id, rel_path))
        return _file(row) if row else None

    def file_for_slug(self, folder: Folder, slug: str) -> FileState | None:
        row = self.brain.one("SELECT * FROM sync_files WHERE folder_id = ? AND slug = ?", (folder.id, slug))
        return _file(row) if row else None

    def record(self, folder: Folder, f: FileState) -> None:
        with self.brain.write() as db:
            db.execute(
                "INSERT INTO sync_files (folder_id, rel_path, slug, file_hash, size, mtime_ns, page_updated_at, synced_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (folder_id, rel_path) DO UPDATE SET slug = excluded.slug, "
                "file_hash = excluded.file_hash, size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "page_updated_at = excluded.page_updated_at, synced_at = excluded.synced_at",
                (folder.id, f.rel_path, f.slug, f.file_hash, f.size, f.mtime_ns, f.page_updated_at, f.synced_at),
            )

    def forget(self, folder: Folder, rel_path: str) -> None:
        with self.brain.write() as db:
            db.execute("DELETE FROM sync_files WHERE folder_id = ? AND rel_path = ?", (folder.id, rel_path))

    # -- conflicts -----------------------------------------------------------

    def add_conflict(self, folder: Folder, rel_path: str, slug: str, brain_content: str) -> int:
        with self.brain.write() as db:
            return db.execute(
                "INSERT INTO sync_conflicts (folder_id, rel_path, slug, brain_content, detected_at) VALUES (?, ?, ?, ?, ?)",
                (folder.id, rel_path, slug, brain_content, now_ms()),
            ).lastrowid

    def conflicts(self, folder: Folder | None = None, *, open_only: bool = True) -> list:
        sql = (
            "SELECT c.id, c.rel_path, c.slug, c.detected_at, c.brain_content, f.root FROM sync_conflicts c "
            "JOIN sync_folders f ON f.id = c.folder_id WHERE f.source_id = ?"
        )
        args: list = [self.source]
        if folder is not None:
            sql += " AND c.folder_id = ?"
            args.append(folder.id)
        if open_only:
            sql += " AND c.resolved_at IS NULL"
        return self.brain.query(sql + " ORDER BY c.id", tuple(args))
