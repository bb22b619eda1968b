"""Markdown-folder sync state and the reads sync needs (migration `0008_markdown_sync_state`), on either backend.

`server/sync/` decides what to do with a folder; every row it keeps or reads lives
here, so SQL stays inside the brain. Rows come back as mapping-like rows;
`server/sync/state.py` turns them into its dataclasses.
"""

from __future__ import annotations

from collections.abc import Sequence

from memverbs.server import people
from memverbs.server.brain.store import Store, first

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row


class SyncStore(Store):
    """`sync_folders`, `sync_files`, `sync_conflicts`, `sync_failures` and sync's page reads."""

    # -- folders -------------------------------------------------------------

    def sync_folder(self, source: str, root: str, prefix: str, mode: str, now: int, host: str | None = None,
                    uid: str | None = None, folder_id: int | None = None) -> Row:
        """The folder's row, created on first use; `sync` upgrades an imported folder to synced. A folder is
        the row `folder_id` when given (server/sync/state.py found it), else the one with its id (`uid`, from
        its .memverbs/folder.json) on `host`, else one known by path alone from before folders had ids (on
        `host`, or on none said): that one is adopted, taking the id. `host`: the machine it is synced from."""
        with self.write() as db:
            row = None
            if folder_id is not None:
                row = db.execute("SELECT * FROM sync_folders WHERE id = ?", (folder_id,)).fetchone()
            if row is None and uid is not None:
                row = db.execute("SELECT * FROM sync_folders WHERE source_id = ? AND folder_uid = ? AND host = ?",
                                 (source, uid, host)).fetchone()
            if row is None:
                row = db.execute(
                    "SELECT * FROM sync_folders WHERE source_id = ? AND root = ? AND folder_uid IS NULL "
                    "AND (host IS NULL OR host = ?) ORDER BY host IS NULL, id LIMIT 1",
                    (source, root, host or ""),
                ).fetchone()
            if row is None:
                folder_id = first(db.execute(
                    "INSERT INTO sync_folders (source_id, root, slug_prefix, mode, created_at, host, folder_uid, owner) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, {self.dialect.owner()}) RETURNING id",
                    (source, root, prefix, mode, now, host, uid, people.current().person),
                ))[0]
            else:
                folder_id = row["id"]
                new_mode = "sync" if "sync" in (mode, row["mode"]) else "import"
                db.execute(
                    "UPDATE sync_folders SET root = ?, slug_prefix = ?, mode = ?, host = COALESCE(host, ?), "
                    "folder_uid = COALESCE(?, folder_uid) WHERE id = ?",
                    (root, prefix, new_mode, host, uid, folder_id),
                )
            return first(db.execute("SELECT * FROM sync_folders WHERE id = ?", (folder_id,)))

    def sync_folder_rows(self, source: str, mode: str | None = None) -> list:
        sql, args = "SELECT * FROM sync_folders WHERE source_id = ?", [source]
        if mode:
            sql += " AND mode = ?"
            args.append(mode)
        return self.query(sql + " ORDER BY root", tuple(args))

    def sync_folder_stamp(self, folder_id: int, *, passed_at: int | None = None, changed_at: int | None = None) -> None:
        with self.write() as db:
            if passed_at is not None:
                db.execute("UPDATE sync_folders SET last_pass_at = ? WHERE id = ?", (passed_at, folder_id))
            if changed_at is not None:
                db.execute("UPDATE sync_folders SET last_change_at = ? WHERE id = ?", (changed_at, folder_id))

    def sync_folder_unavailable(self, folder_id: int, at: int | None, reason: str | None = None) -> None:
        """Mark the folder unavailable since `at` (it cannot be read: gone, unmounted, another folder now at
        its path), with why; `at` None: it is back. Only a change is written."""
        with self.write() as db:
            if at is None:
                db.execute("UPDATE sync_folders SET unavailable_at = NULL, unavailable_reason = NULL "
                           "WHERE id = ? AND unavailable_at IS NOT NULL", (folder_id,))
            else:
                db.execute("UPDATE sync_folders SET unavailable_at = coalesce(unavailable_at, ?), unavailable_reason = ? "
                           "WHERE id = ?", (at, reason, folder_id))

    def sync_prefix_claims(self, source: str) -> list[Row]:
        """The slug prefix of every synced folder of the source, whoever's: (folder_id, slug_prefix, host,
        person, mine). Another person's folder is not a row this session reads; its claim is."""
        return self.query(f"SELECT * FROM {self.dialect.prefix_claims('?')} c ORDER BY c.folder_id", (source,))

    def sync_watcher_claim(self, folder_id: int, held: Sequence, mine: Sequence) -> bool:
        """Take the folder's watch if its claim is still `held` (pid, host, beat as read): a compare-and-swap,
        so of two watchers starting at once one wins. Stamps the folder's host if it had none."""
        same = self.dialect.same  # NULL equals NULL: a folder never watched is claimed from (None, None, None)
        with self.write() as db:
            return db.execute(
                "UPDATE sync_folders SET watcher_pid = ?, watcher_host = ?, watcher_beat = ?, host = COALESCE(host, ?) "
                f"WHERE id = ? AND watcher_pid {same} ? AND watcher_host {same} ? AND watcher_beat {same} ?",
                (*mine, mine[1], folder_id, *held),
            ).rowcount == 1

    def sync_watcher_beat(self, folder_id: int, pid: int, host: str, beat: int | None) -> bool:
        """Beat (or, `beat` None, release) the watch this pid and host hold; False when it is not theirs any more."""
        with self.write() as db:
            if beat is None:
                sql = "UPDATE sync_folders SET watcher_pid = NULL, watcher_host = NULL, watcher_beat = NULL"
                args: tuple = ()
            else:
                sql, args = "UPDATE sync_folders SET watcher_beat = ?", (beat,)
            return db.execute(
                sql + " WHERE id = ? AND watcher_pid = ? AND watcher_host = ?", (*args, folder_id, pid, host)
            ).rowcount == 1

    # -- files ---------------------------------------------------------------

    def sync_file_rows(self, folder_id: int) -> list:
        return self.query("SELECT * FROM sync_files WHERE folder_id = ?", (folder_id,))

    def sync_file_row(self, folder_id: int, *, rel_path: str | None = None, slug: str | None = None) -> Row | None:
        if rel_path is not None:
            return self.one("SELECT * FROM sync_files WHERE folder_id = ? AND rel_path = ?", (folder_id, rel_path))
        return self.one("SELECT * FROM sync_files WHERE folder_id = ? AND slug = ?", (folder_id, slug))

    def sync_record_file(self, folder_id: int, row: Sequence) -> None:
        """`row`: rel_path, slug, file_hash, size, mtime_ns, page_updated_at, synced_at."""
        with self.write() as db:
            db.execute(
                "INSERT INTO sync_files (folder_id, rel_path, slug, file_hash, size, mtime_ns, page_updated_at, synced_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (folder_id, rel_path) DO UPDATE SET slug = excluded.slug, "
                "file_hash = excluded.file_hash, size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "page_updated_at = excluded.page_updated_at, synced_at = excluded.synced_at",
                (folder_id, *row),
            )

    def sync_forget_file(self, folder_id: int, rel_path: str) -> None:
        with self.write() as db:
            db.execute("DELETE FROM sync_files WHERE folder_id = ? AND rel_path = ?", (folder_id, rel_path))

    # Which synced files hold a slug (or have given bytes) is the one question sync asks across
    # people: the dialect's `file_claims` answers it whoever's folder holds the file, naming another
    # person's folder by person and host only (never its path), and leaving out a file whose page is
    # private to someone else (postgres_policies.SYNC_CLAIMS).

    def sync_slug_files(self, source: str, slug: str) -> list:
        """Every folder's file that maps to `slug` (two folders' files may: a collision is a conflict):
        folder_id, rel_path, root (None for another person's folder), host, person, mine."""
        return self.query(
            f"SELECT c.folder_id, c.rel_path, c.root, c.host, c.person, c.mine FROM {self.dialect.file_claims('?', '?', 'NULL')} c "
            "ORDER BY c.folder_id, c.rel_path",
            (source, slug),
        )

    def sync_files_with_bytes(self, source: str, file_hash: str) -> list:
        """Every folder's file whose bytes hash to `file_hash` (a note moved between folders): slug,
        folder_id, rel_path (None for another person's folder), synced_at, host, person, mine."""
        return self.query(
            f"SELECT c.slug, c.folder_id, c.rel_path, c.synced_at, c.host, c.person, c.mine "
            f"FROM {self.dialect.file_claims('?', 'NULL', '?')} c "
            "ORDER BY c.folder_id, c.rel_path",
            (source, file_hash),
        )

    def sync_all_file_slugs(self, source: str) -> set[str]:
        rows = self.query(f"SELECT DISTINCT c.slug FROM {self.dialect.file_claims('?', 'NULL', 'NULL')} c", (source,))
        return {r[0] for r in rows}

    def sync_due(self, source: str, folder_id: int, since: int = 0) -> list:
        """Synced pages written since their file's last sync (only those stamped after `since`)."""
        # The pages changed since `since` first (a range of pages_changed), then their files: SQLite
        # would otherwise range-scan the pages once per synced file (seconds at 10,000 files).
        return self.query(
            f"WITH p AS MATERIALIZED (SELECT slug, updated_at FROM {self.dialect.pages_by_change} "
            "WHERE source_id = ? AND updated_at > ? AND deleted_at IS NULL) "
            "SELECT sf.rel_path, sf.slug FROM p JOIN sync_files sf ON sf.folder_id = ? AND sf.slug = p.slug "
            "WHERE p.updated_at > COALESCE(sf.page_updated_at, 0) ORDER BY sf.rel_path",
            (source, since, folder_id),
        )

    def sync_unfiled(self, source: str, folder_id: int, since: int = 0) -> list:
        """Live pages in the folder's slug space that no synced file of the source holds (written since
        `since`) whose text a caller other than a folder sync wrote (`origin`: a page that came from a file
        and lost it is an orphan, not an agent's page; 'put_page' is a page from before writers were kept):
        pages born in the brain, to be given files. A folder with no prefix claims every slug, but only
        pages created since the folder was first synced."""
        return self.query(
            f"WITH p AS MATERIALIZED (SELECT slug, title, created_at, updated_at, origin FROM {self.dialect.pages_by_change} "
            "WHERE source_id = ? AND updated_at > ? AND deleted_at IS NULL) "
            "SELECT p.slug, p.title, p.updated_at FROM p JOIN sync_folders f ON f.id = ? "
            "WHERE p.origin NOT IN ('sync', 'put_page') AND CASE WHEN f.slug_prefix = '' THEN p.created_at >= f.created_at "
            "ELSE substr(p.slug, 1, length(f.slug_prefix) + 1) = f.slug_prefix || '/' END "
            f"AND NOT EXISTS (SELECT 1 FROM {self.dialect.file_claims('?', 'p.slug', 'NULL')} c) ORDER BY p.slug",
            (source, since, folder_id, source),
        )

    # -- conflicts -----------------------------------------------------------

    def sync_add_conflict(self, folder_id: int, rel_path: str, slug: str, brain_content: str, now: int,
                          cause: str = "file_won") -> int:
        """`cause` (server/sync/conflicts.py's CAUSES): file_won (the file and its page both changed, and
        the file won) or slug_taken (another folder's note holds the slug: this file was not applied)."""
        with self.write() as db:
            return int(first(db.execute(
                "INSERT INTO sync_conflicts (folder_id, rel_path, slug, brain_content, detected_at, cause) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (folder_id, rel_path, slug, brain_content, now, cause),
            ))[0])

    def sync_conflict_rows(self, source: str, folder_id: int | None = None, *, open_only: bool = True) -> list:
        """The conflicts of the folders this session's person syncs (on Postgres, the policies show no other)."""
        sql = (
            # c.*: doctor reads a brain without migrating it, whose conflicts may not have every column yet
            "SELECT c.*, f.root FROM sync_conflicts c JOIN sync_folders f ON f.id = c.folder_id WHERE f.source_id = ?"
        )
        args: list = [source]
        if folder_id is not None:
            sql += " AND c.folder_id = ?"
            args.append(folder_id)
        if open_only:
            sql += " AND c.resolved_at IS NULL"
        return self.query(sql + " ORDER BY c.id", tuple(args))

    def sync_resolve_conflicts(self, ids: Sequence[int], now: int) -> int:
        """Mark open conflicts settled (their kept version stays in the row)."""
        if not ids:
            return 0
        marks = ", ".join(["?"] * len(ids))
        with self.write() as db:
            return db.execute(
                f"UPDATE sync_conflicts SET resolved_at = ? WHERE resolved_at IS NULL AND id IN ({marks})", (now, *ids)
            ).rowcount

    # -- files that cannot be applied as they stand ---------------------------

    def sync_failure_rows(self, folder_id: int) -> list:
        return self.query("SELECT * FROM sync_failures WHERE folder_id = ? ORDER BY rel_path", (folder_id,))

    def sync_record_failure(self, folder_id: int, row: Sequence, now: int) -> None:
        """`row`: rel_path, size, mtime_ns, outcome ('skipped' or 'errors'), reason. A file failing
        again keeps the moment it first failed."""
        with self.write() as db:
            db.execute(
                "INSERT INTO sync_failures (folder_id, rel_path, size, mtime_ns, outcome, reason, first_at, last_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (folder_id, rel_path) DO UPDATE SET size = excluded.size, "
                "mtime_ns = excluded.mtime_ns, outcome = excluded.outcome, reason = excluded.reason, last_at = excluded.last_at",
                (folder_id, *row, now, now),
            )

    def sync_clear_failures(self, folder_id: int, rel_paths: Sequence[str]) -> None:
        if not rel_paths:
            return
        with self.write() as db:
            db.executemany("DELETE FROM sync_failures WHERE folder_id = ? AND rel_path = ?",
                           [(folder_id, rel) for rel in rel_paths])

    def sync_deleted_pages(self, source: str, since: int, limit: int = 500) -> list[Row]:
        """Pages a folder sync deleted since `since` (its note left the folder), newest first: slug, markdown.
        A note that turns up in another folder with the same bytes takes its page back (server/sync/crossing.py)."""
        return self.query(
            "SELECT slug, markdown FROM pages WHERE source_id = ? AND deleted_at >= ? AND origin = 'sync' "
            "ORDER BY deleted_at DESC LIMIT ?",
            (source, since, limit),
        )

    # -- what export and write-back read -------------------------------------

    def live_page_slugs(self, source: str) -> list[tuple[str, str]]:
        """(slug, visibility) of every live page, by slug."""
        rows = self.query("SELECT slug, visibility FROM pages WHERE source_id = ? AND deleted_at IS NULL ORDER BY slug", (source,))
        return [(r[0], r[1]) for r in rows]

    # What was added by hand: the page ops' rows whose origin is not the markdown.
    def manual_aliases(self, source: str, slug: str) -> list[str]:
        rows = self.query("SELECT alias FROM aliases WHERE source_id = ? AND slug = ? AND origin = 'manual' ORDER BY id", (source, slug))
        return [r[0] for r in rows]

    def manual_links(self, source: str, slug: str, *, allow_private: bool = True) -> list[tuple[str, str]]:
        """The links added by hand from the page; without `allow_private`, none that names a private
        or deleted page (a link to a slug with no page is kept: it names nothing hidden)."""
        rows = self.query(
            "SELECT l.link_type, l.to_slug FROM links l LEFT JOIN pages t ON t.source_id = l.source_id AND t.slug = l.to_slug "
            "WHERE l.source_id = ? AND l.from_slug = ? AND l.link_source = 'manual' "
            "AND (? OR t.id IS NULL OR (t.deleted_at IS NULL AND t.visibility = 'world')) ORDER BY l.id",
            (source, slug, allow_private),
        )
        return [(r[0], r[1]) for r in rows]

    def manual_timeline(self, source: str, slug: str) -> list[tuple[str, str]]:
        rows = self.query(
            "SELECT date, summary FROM timeline WHERE source_id = ? AND slug = ? AND origin = 'manual' ORDER BY date, id",
            (source, slug),
        )
        return [(r[0], r[1]) for r in rows]
