"""Per-file sync state, kept in the brain itself (migration `0008_markdown_sync_state`).

A row per folder (root, slug prefix, mode, last pass, the watcher's heartbeat) and
per file (its slug, the hash/size/mtime last synced, and the page's `updated_at`
after that sync, which is how a later write from elsewhere is told apart from our
own). Each file's row is written right after its page, so a `kill -9` mid-pass
loses at most the file in hand: the next pass re-reads it and finds the page current.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memverbs.server.errors import MemverbsError
from memverbs.server.sync import identity
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row


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
    host: str | None = None  # the machine it is synced from (None: a row from before hosts were kept)
    watcher_host: str | None = None
    uid: str | None = None  # the id in its .memverbs/folder.json (None: known by path, from before ids)
    owner: int = 1  # the person who syncs it (its row, files and conflicts are theirs alone)
    unavailable_at: int | None = None  # since when it cannot be read (gone, unmounted, unreadable); None: it can
    unavailable_reason: str | None = None

    def here(self) -> bool:
        """Whether this machine syncs it: only then is `root` a path to read here."""
        return self.host in (None, this_host())


HEARTBEAT_MS = 2_000
STALE_MS = 5 * HEARTBEAT_MS  # a watcher silent this long is gone (killed, its machine off or suspended)


class SlugSpaceTaken(MemverbsError):
    """A second folder asked for a slug prefix another synced folder holds (message: which; fix: --prefix)."""


class PrefixChanged(MemverbsError):
    """A synced folder asked for another slug prefix than the one its notes are filed under."""


def _prefix_for(known: Folder | None, root: str, asked: str | None) -> str:
    """The prefix a pass over the folder uses: the one asked for, or the one it was synced with."""
    if asked is None:
        return known.prefix if known is not None else ""
    if known is not None and known.mode == "sync" and known.prefix != asked:
        was = f'--prefix "{known.prefix}"' if known.prefix else "no --prefix"
        now = f'--prefix "{asked}"' if asked else "no prefix"
        raise PrefixChanged(
            f"{root} is synced with {was}; with {now} its notes would be filed again, as other pages",
            f"Run `memverbs sync {root}` without --prefix (it keeps the folder's own), or sync a copy of the folder "
            "with the new prefix.",
        )
    return asked


def _suggest(root: str, taken: set[str]) -> str:
    from memverbs.server.sync.slugs import segment_slug  # noqa: PLC0415

    base = segment_slug(os.path.basename(root.rstrip("/")) or "notes")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def this_host() -> str:
    """This machine's name, as folders and watchers are told apart by (MEMVERBS_HOST overrides it)."""
    return os.environ.get("MEMVERBS_HOST", "").strip() or socket.gethostname()


def live_holder(folder: Folder) -> str | None:
    """Who watches the folder, if that watcher is alive: 'pid N on HOST'; None when nobody does."""
    pid, host, beat = folder.watcher_pid, folder.watcher_host, folder.watcher_beat
    if not pid or not beat or now_ms() - beat > STALE_MS:
        return None
    if host is None or host == this_host():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # killed (-9 included): its claim is stale at once
        except PermissionError:
            pass  # alive, another user's
    return f"pid {pid} on {host or 'this host'}"


@dataclass
class FileState:
    rel_path: str
    slug: str
    file_hash: str
    size: int
    mtime_ns: int
    page_updated_at: int | None
    synced_at: int


@dataclass
class FailedFile:
    """A file that could not be applied as it stands (bad YAML, not UTF-8, too large, a slug clash):
    not pending, since nothing but an edit of the file will change that."""

    rel_path: str
    size: int
    mtime_ns: int
    outcome: str  # 'skipped' or 'errors', as the pass reported it
    reason: str
    first_at: int
    last_at: int


def _folder(row: Row) -> Folder:
    # doctor reads a brain without migrating it: one from before hosts (or ids) were kept lacks the columns
    cols = set(row.keys())
    return Folder(
        row["id"], row["root"], row["slug_prefix"], row["mode"], row["last_pass_at"], row["last_change_at"],
        row["watcher_pid"], row["watcher_beat"],
        host=row["host"] if "host" in cols else None,
        watcher_host=row["watcher_host"] if "watcher_host" in cols else None,
        uid=row["folder_uid"] if "folder_uid" in cols else None,
        owner=row["owner"] if "owner" in cols else 1,
        unavailable_at=row["unavailable_at"] if "unavailable_at" in cols else None,
        unavailable_reason=row["unavailable_reason"] if "unavailable_reason" in cols else None,
    )


def _file(row: Row) -> FileState:
    return FileState(
        row["rel_path"], row["slug"], row["file_hash"], row["size"], row["mtime_ns"], row["page_updated_at"], row["synced_at"]
    )


class SyncState:
    """The sync state of one brain and source (the rows live in the brain: `SyncStore`)."""

    def __init__(self, brain: Brain, source: str) -> None:
        self.brain = brain
        self.source = source

    # -- folders -------------------------------------------------------------

    def folder(self, root: str, prefix: str | None, mode: str) -> Folder:
        """The folder's row, created on first use; `sync` upgrades an imported folder to synced.

        A folder is its id (`.memverbs/folder.json`, given on its first sync) on this host, never its path
        alone: a teammate's folder at the same path is another folder, and a moved folder is still this one.
        A synced folder claims its slug prefix: a second folder claiming one already claimed, by anyone, is refused
        (SlugSpaceTaken), with the fix. `prefix` None (no --prefix given) is the folder's own from before
        (none for a new folder); a synced folder asked for another is refused (PrefixChanged): its notes
        would be filed again under other slugs."""
        root = os.path.realpath(root)
        host = this_host()
        rows = [_folder(r) for r in self.brain.sync_folder_rows(self.source)]
        uid = identity.read_id(root)
        if uid is None:
            # A folder synced from this path that has lost its identity file (emptied, made anew, a drive not
            # mounted): the same folder, until its pass finds out whether it is really there
            # (server/sync/presence.py), not a new folder given a new id over the old one's notes.
            lost = next((f for f in rows if f.uid is not None and f.root == root and f.host == host), None)
            uid = lost.uid if lost is not None else (identity.write_id(root) if mode == "sync" else None)
        mine = next((f for f in rows if uid is not None and f.uid == uid and f.host == host), None)
        if mine is not None and mine.root != root and os.path.isdir(mine.root) and identity.read_id(mine.root) == uid:
            # The same id in two places on this machine: a copy of a synced folder (`cp -r notes notes2`),
            # which is a folder of its own, not the original moved.
            uid = identity.write_id(root) if mode == "sync" else None
            mine = None
        if mine is None:
            mine = next((f for f in rows if f.uid is None and f.root == root and f.host in (None, host)), None)
        prefix = _prefix_for(mine, root, prefix)
        if mode == "sync":
            mine = self._claim_prefix(rows, mine, root, prefix, host)
            self._refuse_others_prefix(mine, root, prefix, {f.prefix for f in rows})
        return _folder(self.brain.sync_folder(self.source, root, prefix, mode, now_ms(), host, uid, mine.id if mine else None))

    def _claim_prefix(self, rows: list[Folder], mine: Folder | None, root: str, prefix: str, host: str) -> Folder | None:
        """Refuse a slug prefix another synced folder holds. One of this machine's from before ids were kept
        whose folder is gone from its path is this folder, moved: it is adopted, with its files' state, so
        its notes keep their pages (one with an id is another folder, perhaps on a drive not mounted now)."""
        for other in rows:
            if other.mode != "sync" or other.prefix != prefix or (mine is not None and other.id == mine.id):
                continue
            if mine is None and other.uid is None and other.here() and not os.path.isdir(other.root):
                return other
            where = f"{other.root}" + (f" on {other.host}" if other.host and other.host != host else "")
            said = f'--prefix "{prefix}"' if prefix else "no --prefix"
            raise SlugSpaceTaken(
                f"{root} cannot be synced with {said}: {where} is synced with it already, and two folders' notes "
                "would overwrite each other's pages",
                f"Give this folder a prefix of its own: `memverbs sync {root} --prefix NAME` (e.g. --prefix "
                f"{_suggest(root, {f.prefix for f in rows})}).",
            )
        return mine

    def _refuse_others_prefix(self, mine: Folder | None, root: str, prefix: str, taken: set[str]) -> None:
        """A teammate's synced folder claims its prefix too, though its row is not this person's to read."""
        claims = self.brain.sync_prefix_claims(self.source)
        for other in claims:
            if other["mine"] or other["slug_prefix"] != prefix or (mine is not None and other["folder_id"] == mine.id):
                continue
            said = f'--prefix "{prefix}"' if prefix else "no --prefix"
            raise SlugSpaceTaken(
                f"{root} cannot be synced with {said}: another person's folder (on {other['host'] or 'an unknown host'}) "
                "is synced with it already, and the two folders' notes would overwrite each other's pages",
                f"Give this folder a prefix of its own: `memverbs sync {root} --prefix NAME` (e.g. --prefix "
                f"{_suggest(root, taken | {c['slug_prefix'] for c in claims})}).",
            )

    def folders(self, mode: str | None = None) -> list[Folder]:
        return [_folder(r) for r in self.brain.sync_folder_rows(self.source, mode)]

    def pass_done(self, folder: Folder, changed: bool) -> None:
        now = now_ms()
        self.brain.sync_folder_stamp(folder.id, passed_at=now, changed_at=now if changed else None)

    def changed(self, folder: Folder) -> None:
        self.brain.sync_folder_stamp(folder.id, changed_at=now_ms())

    def unavailable(self, folder: Folder, reason: str | None) -> None:
        """Mark the folder unavailable, with why (`reason` None: it is back). Its pages stay as they are."""
        if reason is None:
            if folder.unavailable_at is not None:
                self.brain.sync_folder_unavailable(folder.id, None)
            folder.unavailable_at = folder.unavailable_reason = None
            return
        if folder.unavailable_reason != reason:
            at = folder.unavailable_at or now_ms()
            self.brain.sync_folder_unavailable(folder.id, at, reason)
            folder.unavailable_at, folder.unavailable_reason = at, reason

    # -- the one watcher per folder --------------------------------------------

    def claim_watch(self, folder: Folder) -> str | None:
        """Become the folder's one watcher; None when this process now holds it, else who does.

        The claim is the folder's row (pid, host, heartbeat), so it holds across machines sharing the
        brain. A claim whose heartbeat stopped (a watcher killed with -9, a machine gone) is stale
        after STALE_MS and taken over; on this host a dead pid is stale at once. Taking it is a
        compare-and-swap on the claim as read: of two watchers starting together, one wins."""
        for _ in range(3):
            row = next((r for r in self.brain.sync_folder_rows(self.source) if r["id"] == folder.id), None)
            if row is None:
                return "the folder is no longer synced"
            current = _folder(row)
            holder = live_holder(current)
            if holder is not None and (current.watcher_pid, current.watcher_host) != (os.getpid(), this_host()):
                return holder
            held = (current.watcher_pid, current.watcher_host, current.watcher_beat)
            if self.brain.sync_watcher_claim(folder.id, held, (os.getpid(), this_host(), now_ms())):
                folder.watcher_pid, folder.watcher_host = os.getpid(), this_host()
                return None
        return "another watcher is claiming it at this moment"

    def heartbeat(self, folder: Folder) -> bool:
        """Beat this process's claim; False when it lost it (stale for too long, and taken over)."""
        return self.brain.sync_watcher_beat(folder.id, os.getpid(), this_host(), now_ms())

    def release_watch(self, folder: Folder) -> None:
        self.brain.sync_watcher_beat(folder.id, os.getpid(), this_host(), None)

    # -- files ---------------------------------------------------------------

    def files(self, folder: Folder) -> dict[str, FileState]:
        return {r["rel_path"]: _file(r) for r in self.brain.sync_file_rows(folder.id)}

    def file(self, folder: Folder, rel_path: str) -> FileState | None:
        row = self.brain.sync_file_row(folder.id, rel_path=rel_path)
        return _file(row) if row else None

    def file_for_slug(self, folder: Folder, slug: str) -> FileState | None:
        row = self.brain.sync_file_row(folder.id, slug=slug)
        return _file(row) if row else None

    def record(self, folder: Folder, f: FileState) -> None:
        self.brain.sync_record_file(
            folder.id, (f.rel_path, f.slug, f.file_hash, f.size, f.mtime_ns, f.page_updated_at, f.synced_at)
        )

    def forget(self, folder: Folder, rel_path: str) -> None:
        self.brain.sync_forget_file(folder.id, rel_path)

    # -- files that fail as they stand ---------------------------------------

    def failures(self, folder: Folder) -> dict[str, FailedFile]:
        return {
            r["rel_path"]: FailedFile(r["rel_path"], r["size"], r["mtime_ns"], r["outcome"], r["reason"], r["first_at"], r["last_at"])
            for r in self.brain.sync_failure_rows(folder.id)
        }

    def failed(self, folder: Folder, rel_path: str, size: int, mtime_ns: int, outcome: str, reason: str) -> None:
        self.brain.sync_record_failure(folder.id, (rel_path, size, mtime_ns, outcome, reason), now_ms())

    def recovered(self, folder: Folder, rel_paths: list[str]) -> None:
        self.brain.sync_clear_failures(folder.id, rel_paths)

    # -- conflicts -----------------------------------------------------------

    def add_conflict(self, folder: Folder, rel_path: str, slug: str, brain_content: str, cause: str = "file_won") -> int:
        return self.brain.sync_add_conflict(folder.id, rel_path, slug, brain_content, now_ms(), cause)

    def conflicts(self, folder: Folder | None = None, *, open_only: bool = True) -> list:
        return self.brain.sync_conflict_rows(self.source, folder.id if folder else None, open_only=open_only)

    def resolve(self, ids: list[int]) -> int:
        return self.brain.sync_resolve_conflicts(ids, now_ms())
