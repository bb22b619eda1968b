"""`sync --watch`: a watchdog observer per folder, one debounced worker that applies changes.

The observer's thread only notes which paths changed (and renames); the worker —
the calling thread, which owns the brain connection — applies a path once it has
been quiet for DEBOUNCE_S, so an editor's burst of saves (write, rename over,
touch) becomes one `put_page`. Between events it writes memverbs's own writes to
synced pages back to their files, and beats a heartbeat into the folder's row.
On start it runs one full pass, which is how a restart (or a `kill -9`) resumes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from memverbs.server.errors import BrainLocked, MemverbsError
from memverbs.server.sync import scan
from memverbs.server.sync.importer import FolderPass
from memverbs.server.sync.moves import HOLD_S, WatchMoves
from memverbs.server.sync.presence import why_unavailable
from memverbs.server.sync.report import Report
from memverbs.server.sync.state import HEARTBEAT_MS
from memverbs.server.sync.writeback import LOOK_BACK_MS, write_back
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

DEBOUNCE_S = 0.15
PRESENCE_EVERY_S = 1.0  # how often a watched folder is looked at: is it still there (or back)?
TICK_S = 0.05
WRITE_BACK_EVERY_S = 0.5
LOCKED_FIRST_WAIT_S = 0.5  # another writer's transaction usually ends within a busy timeout or two
LOCKED_MAX_WAIT_S = 30.0
FAILED_WAIT_S = 5.0  # a missing or corrupt brain needs a person: check now and then, without a flood of warnings


class Changes:
    """Paths that changed, by folder-relative path, with the time of their last event (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.touched: dict[str, float] = {}
        self.moves: dict[str, str] = {}  # new rel → old rel

    def touch(self, rel: str) -> None:
        with self.lock:
            self.touched[rel] = time.monotonic()

    def touch_dir(self, rel: str) -> None:
        with self.lock:
            self.touched[rel + "/"] = time.monotonic()

    def move(self, old: str, new: str) -> None:
        with self.lock:
            self.moves[new] = self.moves.pop(old, old)
            self.touched.pop(old, None)
            self.touched[new] = time.monotonic()

    def requeue(self, rel: str, moved_from: str | None) -> None:
        """Put a change back (the brain could not take it yet)."""
        with self.lock:
            self.touched.setdefault(rel, time.monotonic())
            if moved_from is not None:
                self.moves.setdefault(rel, moved_from)

    def settled(self, quiet_s: float) -> list[tuple[str, str | None]]:
        """Paths quiet for `quiet_s`, each with the path it was moved from (if any), taken off the list."""
        now = time.monotonic()
        with self.lock:
            ready = [rel for rel, t in self.touched.items() if now - t >= quiet_s]
            out = [(rel, self.moves.pop(rel, None)) for rel in ready]
            for rel in ready:
                del self.touched[rel]
        return out


def _relevant(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not any(p.startswith(".") for p in parts) and (scan.is_markdown(parts[-1]) or rel == scan.FACTS_FILE)


def make_handler(root: str, changes: Changes) -> FileSystemEventHandler:
    from watchdog.events import FileSystemEventHandler  # noqa: PLC0415 - only --watch loads watchdog

    def rel_of(path: str | bytes) -> str:
        path = os.fsdecode(path)
        return os.path.relpath(path, root).replace(os.sep, "/")

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            if event.event_type == "moved":
                old, new = rel_of(event.src_path), rel_of(event.dest_path)
                if event.is_directory:
                    changes.touch("")  # a folder moved: rescan everything below it
                elif _relevant(new) and _relevant(old):
                    changes.move(old, new)
                elif _relevant(new):
                    changes.touch(new)  # an editor's temp file renamed over the note
                elif _relevant(old):
                    changes.touch(old)
                return
            rel = rel_of(event.src_path)
            if event.is_directory:
                if event.event_type == "created" and not any(p.startswith(".") for p in rel.split("/")):
                    changes.touch_dir(rel)  # files may land in it before its own watch is set: walk it
                elif event.event_type == "deleted":
                    changes.touch("")
                return
            if _relevant(rel):
                changes.touch(rel)

    return Handler()


def start_observer(
    roots: list[str],
    changes_by_root: dict[str, Changes],
    warn: Callable[[str], None],
    native: Callable[[], BaseObserver] | None = None,
) -> BaseObserver:
    """A native observer (inotify on Linux); when the OS runs out of watches, a polling one, said so. A
    root that is not there yet is watched once it is (`rearm`)."""
    from watchdog.observers import Observer  # noqa: PLC0415
    from watchdog.observers.polling import PollingObserver  # noqa: PLC0415

    def build(make: Callable[[], BaseObserver]) -> BaseObserver:
        obs = make()
        for root in roots:
            if os.path.isdir(root):
                obs.schedule(make_handler(root, changes_by_root[root]), root, recursive=True)
        obs.start()
        return obs

    try:
        return build(native or Observer)
    except OSError as exc:
        warn(
            f"cannot watch with inotify ({exc.strerror or exc}); polling every second instead. "
            "Raise the limit for instant updates: sysctl fs.inotify.max_user_watches=524288"
        )
        return build(PollingObserver)


def rearm(observer: BaseObserver, root: str, changes: Changes) -> bool:
    """Watch `root` anew: a folder removed (or unmounted) took its watch with it, and one put back is
    a new folder to the OS. False when it cannot be watched (yet)."""
    from watchdog.observers.api import ObservedWatch  # noqa: PLC0415

    with contextlib.suppress(KeyError, OSError):
        observer.unschedule(ObservedWatch(root, recursive=True))
    try:
        observer.schedule(make_handler(root, changes), root, recursive=True)
    except OSError:
        return False
    return True


class FolderWatch:
    """One synced folder under watch: applies settled changes and writes back. A folder that is not
    there to read (server/sync/presence.py) deletes nothing: its changes wait, its pages stay, and
    when it is back it is watched anew and compared whole (`present`)."""

    def __init__(self, folder_pass: FolderPass, changes: Changes, on_report: Callable[[Report, str], None]) -> None:
        self.fp = folder_pass
        self.changes = changes
        self.on_report = on_report
        self.last_write_back = 0.0
        self.written_back_until = 0  # epoch ms: pages stamped before this (less the look-back) were handled
        self.last_beat = 0.0
        self.lost = False  # another watcher holds the folder now
        self.held: dict[str, float] = {}  # deleted notes, by when: their pages wait HOLD_S for a move to pair
        self.rearm: Callable[[], bool] | None = None  # watches the folder anew (given by `watch`)
        self.last_look = 0.0

    def full_pass(self, why: str, beat: Callable[[], None] | None = None) -> None:
        """A whole pass; `beat` keeps the watchers' claims alive through a long one (a big folder's first)."""
        report = self.fp.run(self.fp.entries(), follow_deletes=True, progress=(lambda *_: beat()) if beat else None)
        write_back(self.fp, report)
        self.on_report(report, why)

    def present(self) -> bool:
        """Whether the folder is there to read; looked at every PRESENCE_EVERY_S (and said when it changes).
        One that comes back is watched anew and passed whole: what changed meanwhile is found then."""
        folder = self.fp.folder
        now = time.monotonic()
        if now - self.last_look < PRESENCE_EVERY_S:
            return folder.unavailable_at is None
        self.last_look = now
        was_gone = folder.unavailable_at is not None
        why = why_unavailable(folder)
        if why is not None:
            if not was_gone or folder.unavailable_reason != why:
                self.fp.state.unavailable(folder, why)
                report = Report(folder.root, folder.prefix)
                report.unavailable = why
                self.on_report(report, "unavailable")
            self.held.clear()  # a note cannot be told gone while its folder is: nothing is deleted
            return False
        if was_gone:
            if self.rearm is not None and not self.rearm():
                return False  # there, but not watchable yet: looked at again soon
            self.changes.settled(0)  # what was noted while it was gone is in the pass below
            self.full_pass("the folder is back")  # clears the mark, compares every note with its page
            return folder.unavailable_at is None
        return True

    def tick(self) -> None:
        if not self.present():
            self.beat()
            return
        settled = self.changes.settled(DEBOUNCE_S)
        if any(rel == "" for rel, _ in settled):
            self.full_pass("a folder changed")
            settled = [(r, o) for r, o in settled if r]
        due = self._due_deletes()
        if settled or due:
            report = Report(self.fp.folder.root, self.fp.folder.prefix)
            moves = WatchMoves(self.fp.state, self.fp.folder)
            for i, (rel, moved_from) in enumerate(settled):
                try:
                    if rel.endswith("/"):
                        for e in scan.walk(self.fp.folder.root, rel):
                            if e.kind == "page":
                                self.apply(e.rel, None, report, moves)
                        continue
                    self.apply(rel, moved_from, report, moves)
                except MemverbsError:
                    for later, origin in settled[i:]:
                        self.changes.requeue(later, origin)  # nothing is dropped: retried on a later tick
                    raise
            for rel in due:
                self.delete(rel, report)
            if report.changed:
                self.fp.state.changed(self.fp.folder)
            self.on_report(report, "change")
        now = time.monotonic()
        if now - self.last_write_back >= WRITE_BACK_EVERY_S:
            self.last_write_back = now
            report = Report(self.fp.folder.root, self.fp.folder.prefix)
            looked_at = now_ms()
            write_back(self.fp, report, since=self.written_back_until - LOOK_BACK_MS)
            self.written_back_until = looked_at
            if report.counts["written_back"] or report.errors:
                self.on_report(report, "write-back")
        self.beat()

    def beat(self) -> None:
        now = time.monotonic()
        if not self.lost and now - self.last_beat >= HEARTBEAT_MS / 1000:
            self.last_beat = now
            if not self.fp.state.heartbeat(self.fp.folder) and self.fp.state.claim_watch(self.fp.folder) is not None:
                # Silent past STALE_MS (a suspended machine, a stalled brain) and another watcher took
                # the folder over: two watchers would write the same files, so this one stops.
                self.lost = True

    def apply(self, rel: str, moved_from: str | None, report: Report, moves: WatchMoves) -> None:
        fp = self.fp
        path = os.path.join(fp.folder.root, rel)
        if rel == scan.FACTS_FILE:
            fp.apply_facts(scan.Entry(rel, path, kind="facts"), report, fp.state.file(fp.folder, rel))
            return
        if moved_from is not None:
            moves.hint(rel, moved_from)  # the observer saw this move: the old note is this file, whatever its bytes
            self.held.setdefault(moved_from, time.monotonic())  # if the new file cannot be applied, the old is gone
        if os.path.lexists(path):
            # A new file may be a gone note (moved, perhaps edited): it keeps that note's page (server/sync/moves.py).
            fp.apply(rel, report, fp.state.file(fp.folder, rel), None, moves)  # reads without following a link
            return
        if fp.state.file(fp.folder, rel) is not None:
            # Held a moment before its page goes: the file it became may come in a later event (a move into a
            # folder made just before is seen as a delete here and a create there).
            self.held.setdefault(rel, time.monotonic())

    def _due_deletes(self) -> list[str]:
        now = time.monotonic()
        due = [rel for rel, since in self.held.items() if now - since >= HOLD_S]
        for rel in due:
            del self.held[rel]
        return due

    def delete(self, rel: str, report: Report) -> None:
        """A held delete's time is up: the note did not reappear elsewhere, so its page goes (put_page revives it)."""
        fp = self.fp
        prev = fp.state.file(fp.folder, rel)
        if prev is None:
            return  # it moved: its row went with it
        if why_unavailable(fp.folder) is not None:
            self.last_look = 0.0  # the whole folder went: the next tick says so, and nothing is deleted
            return
        if os.path.lexists(os.path.join(fp.folder.root, rel)):
            fp.apply(rel, report, prev)  # it is back
            return
        try:
            fp.remove(rel, prev, report)
        except MemverbsError:
            self.held.setdefault(rel, time.monotonic())
            raise

    def stop(self) -> None:
        self.fp.state.release_watch(self.fp.folder)


class Retry:
    """How one folder's watch waits out a failed tick (whose changes tick() has put back, so nothing
    is lost); the other folders keep going meanwhile.

    A locked brain is another writer's long transaction: said as such, retried soon, backing off
    while the lock stays held. Any other failure (a missing or corrupt brain, a folder gone) is
    reported as a failure with its fix and checked again now and then, so a fixed cause resumes
    without a restart.
    """

    def __init__(self) -> None:
        self.locked_in_a_row = 0
        self.not_before = 0.0  # time.monotonic() of the next try

    def due(self, now: float) -> bool:
        return now >= self.not_before

    def succeeded(self) -> None:
        self.locked_in_a_row = 0

    def failed(self, exc: MemverbsError | OSError, now: float) -> str:
        """Schedule the next try; returns what to say."""
        if isinstance(exc, BrainLocked):
            wait = min(LOCKED_FIRST_WAIT_S * 2**self.locked_in_a_row, LOCKED_MAX_WAIT_S)
            self.locked_in_a_row += 1
            said = f"the brain is locked by another writer; retrying in {wait:g} s"
        else:
            self.locked_in_a_row = 0
            wait = FAILED_WAIT_S
            fix = getattr(exc, "fix", "")
            said = f"failed: {getattr(exc, 'message', None) or exc}" + (f" (fix: {fix})" if fix else "")
            said += f"; trying again in {wait:g} s"
        self.not_before = now + wait
        return said


def watch(watches: list[FolderWatch], warn: Callable[[str], None], stop: threading.Event) -> None:
    changes_by_root = {w.fp.folder.root: w.changes for w in watches}
    observer = start_observer(list(changes_by_root), changes_by_root, warn)
    for w in watches:
        w.rearm = functools.partial(rearm, observer, w.fp.folder.root, w.changes)
    retries = {w.fp.folder.root: Retry() for w in watches}
    try:
        def beat_all() -> None:
            for other in watches:
                other.beat()

        for w in watches:
            w.full_pass("start", beat_all)  # catch up with what changed while nobody watched
        while not stop.is_set() and any(not w.lost for w in watches):
            for w in watches:
                retry = retries[w.fp.folder.root]
                if w.lost or not retry.due(time.monotonic()):
                    continue
                try:
                    w.tick()
                except (MemverbsError, OSError) as exc:
                    warn(f"{w.fp.folder.root}: {retry.failed(exc, time.monotonic())}")
                else:
                    retry.succeeded()
                if w.lost:
                    warn(f"{w.fp.folder.root}: another watcher took this folder over; no longer watching it here")
            stop.wait(TICK_S)
    finally:
        observer.stop()
        observer.join(timeout=5)
        for w in watches:
            if not w.lost:
                w.stop()
