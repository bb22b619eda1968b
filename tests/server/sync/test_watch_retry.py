"""How `sync --watch` meets a brain that cannot serve: a locked brain arrives as `BrainLocked` (its
type, not a message), is said as locked and retried with back-off; any other failure is reported as
a failure with its fix. Real brains, a real SQLite write lock held by a second connection."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from vaults import write

from memverbs.server.errors import BrainCorrupt, BrainLocked
from memverbs.server.sync import watcher
from memverbs.server.sync.watcher import Retry


def test_a_locked_brain_backs_off_and_says_locked():
    retry = Retry()
    waits = []
    for _ in range(8):
        said = retry.failed(BrainLocked("brain b.db is locked by another process (database is locked)", "Retry."), 100.0)
        assert said.startswith("the brain is locked by another writer; retrying in "), said
        waits.append(retry.not_before - 100.0)
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, watcher.LOCKED_MAX_WAIT_S, watcher.LOCKED_MAX_WAIT_S]
    assert not retry.due(100.0 + watcher.LOCKED_MAX_WAIT_S - 0.01) and retry.due(100.0 + watcher.LOCKED_MAX_WAIT_S)
    retry.succeeded()
    retry.failed(BrainLocked("locked", "Retry."), 200.0)
    assert retry.not_before == 200.0 + watcher.LOCKED_FIRST_WAIT_S  # a fresh lock starts from the first wait again


@pytest.mark.parametrize("exc", [BrainCorrupt("brain b.db is not a SQLite database", "Restore it from a backup."),
                                 FileNotFoundError(2, "No such file or directory", "/v")])
def test_any_other_failure_is_reported_as_a_failure_with_its_fix(exc):
    retry = Retry()
    retry.failed(BrainLocked("locked", "Retry."), 0.0)
    said = retry.failed(exc, 10.0)
    assert said.startswith("failed: ") and "locked" not in said, said
    assert said.endswith(f"; trying again in {watcher.FAILED_WAIT_S:g} s")
    if isinstance(exc, BrainCorrupt):
        assert "not a SQLite database (fix: Restore it from a backup.)" in said
    assert retry.not_before == 10.0 + watcher.FAILED_WAIT_S and retry.locked_in_a_row == 0


def test_an_unavailable_answer_reaches_the_importer_as_its_own_type(tmp_path, home):
    """The dispatcher answers `unavailable`; the importer raises the error behind it, not a rebuilt BrainError."""
    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.report import Report
    from memverbs.server.sync.state import SyncState

    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    rt = Runtime(home)
    try:
        brain = rt.brain()
        dispatcher = rt.local_dispatcher()

        def damaged():
            raise BrainCorrupt("brain b.db is damaged (database disk image is malformed)", "Restore it from a backup.")

        dispatcher.open_brain = damaged
        fp = FolderPass(dispatcher, brain, rt.source, SyncState(brain, rt.source).folder(str(root), "", "sync"))
        with pytest.raises(BrainCorrupt, match="malformed"):
            fp.apply("a.md", Report(str(root)))
    finally:
        rt.close()


@pytest.mark.sqlite_only  # holds SQLite's own write lock from a second connection
def test_the_watch_says_locked_then_lands_the_change_once_the_lock_is_gone(tmp_path, home):
    from helpers import Client

    from memverbs.server.brain.sqlite import SqliteBrain
    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.state import SyncState
    from memverbs.server.sync.watcher import Changes, FolderWatch, watch

    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    rt = Runtime(home)
    path = rt.brain_location.path
    brain = SqliteBrain.open(path, busy_timeout_ms=200)  # give up on the lock quickly
    warned: list[str] = []
    started, stop = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def on_report(report, why):
        if why == "start":
            started.set()
        elif report.counts.get("updated"):
            stop.set()  # the edit made while locked has landed

    def hold_the_lock_while_editing():
        try:
            assert started.wait(30), "the start-up pass never finished"
            holder = sqlite3.connect(path, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            try:
                write(root / "a.md", "# A\nedited while locked\n")
                deadline = time.monotonic() + 30  # a guard against a hang, not what is tested
                while not any("locked" in w for w in warned) and time.monotonic() < deadline:
                    time.sleep(0.02)
            finally:
                holder.execute("ROLLBACK")
                holder.close()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread, which fails with it
            failures.append(exc)
            stop.set()

    try:
        dispatcher = rt.local_dispatcher()
        dispatcher.open_brain = lambda: brain
        fp = FolderPass(dispatcher, brain, rt.source, SyncState(brain, rt.source).folder(str(root), "", "sync"))
        helper = threading.Thread(target=hold_the_lock_while_editing)
        helper.start()
        guard = threading.Timer(60, stop.set)  # a guard against a hang, not what is tested
        guard.start()
        try:
            watch([FolderWatch(fp, Changes(), on_report)], warned.append, stop)
        finally:
            guard.cancel()
            helper.join(30)
        assert not failures, failures
        assert warned and all(": the brain is locked by another writer; retrying in " in w for w in warned), warned
        assert "edited while locked" in Client(dispatcher).ok("get_page", slug="a")["body"]
    finally:
        brain.close()
        rt.close()
