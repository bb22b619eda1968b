"""`memverbs sync --watch`: a real process with a real watchdog observer, real concurrent writers, kill -9."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import time

import pytest
from vaults import wait_for, write

from memverbs.server.errors import BrainLocked

pytestmark = pytest.mark.slow








def test_saves_renames_deletes_and_write_back_while_watching(tmp_path, local, watcher, cli_json):
    root = tmp_path / "v"
    write(root / "a.md", "# A\nfirst\n")
    proc = watcher(root)
    assert local.ok("get_page", slug="a")["title"] == "A"
    status = wait_for(lambda: [f for f in cli_json("sync", "--status")[1]["folders"] if f["watching"]], "the heartbeat")
    assert status[0]["watcher_pid"] == proc.pid

    write(root / "people" / "carol.md", "---\ntitle: Carol Danvers\n---\nPilot, zebraword.\n")
    wait_for(lambda: local.ok("search", query="zebraword")["results"], "a saved file to be searchable")
    assert local.ok("entity", name="Carol Danvers")["card"]["entity"]["slug"] == "people/carol"

    local.ok("remember", fact="Carol flies", provenance="test", entity="people/carol")
    os.rename(root / "people" / "carol.md", root / "people" / "carol-d.md")
    card = wait_for(lambda: local.ok("entity", name="people/carol-d").get("card"), "the rename")
    assert card["entity"]["slug"] == "people/carol-d" and card["active_fact_count"] == 1
    assert local.err("get_page", slug="people/carol")["error"] == "not_found"

    os.unlink(root / "people" / "carol-d.md")
    wait_for(lambda: local("get_page", slug="people/carol-d")[1], "the delete")

    # a concurrent writer (this process) changes a synced page: it goes back to the file
    local.ok("put_page", slug="a", content="# A\nwritten by an agent\n")
    wait_for(lambda: "written by an agent" in (root / "a.md").read_text(), "the write-back")

    # an editor's burst of saves is one write
    for i in range(20):
        write(root / "burst.md", f"# Burst\nsave {i}\n")
    wait_for(lambda: "save 19" in local("get_page", slug="burst")[0].get("body", ""), "the burst")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert not cli_json("sync", "--status")[1]["folders"][0]["watching"]  # a clean stop says so
    events = [json.loads(line) for line in out.splitlines()]
    page_writes = sum(e["created"] + e["updated"] for e in events if e["event"] == "change")
    burst_writes = page_writes - 1  # carol.md was the one other file created or updated
    assert 1 <= burst_writes <= 5, events  # debounced: 20 saves, a handful of writes at most
    assert all(e["errors"] == 0 for e in events), events


def test_kill_9_mid_pass_then_a_restart_resumes(tmp_path, env, memverbs_cmd, local):
    root = tmp_path / "v"
    for i in range(400):
        write(root / f"n{i:03}.md", f"# Note {i}\nbody {i}\n")
    proc = subprocess.Popen([*memverbs_cmd, "sync", str(root), "--json"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: len(local.ok("list_pages", limit=500)["pages"]) >= 30 or proc.poll() is not None, "some progress")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    done = subprocess.run([*memverbs_cmd, "sync", str(root), "--json"], env=env, capture_output=True, text=True, timeout=300)
    rep = json.loads(done.stdout)
    assert done.returncode == 0 and rep["errors"] == 0
    assert rep["created"] + rep["updated"] + rep["unchanged"] == 400
    assert rep["unchanged"] >= 1  # what the killed pass finished was not redone
    assert len(local.ok("list_pages", limit=500)["pages"]) == 400


def test_out_of_inotify_watches_falls_back_to_polling_and_says_so(tmp_path):
    from watchdog.observers import Observer

    from memverbs.server.sync.watcher import Changes, start_observer

    class Exhausted(Observer):
        def start(self):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    root = str(tmp_path)
    changes = Changes()
    said = []
    obs = start_observer([root], {root: changes}, said.append, native=Exhausted)
    try:
        assert "polling" in said[0] and "max_user_watches" in said[0]
        write(tmp_path / "x.md", "# X\n")
        wait_for(lambda: changes.settled(0), "the polling observer to see the file", timeout=10)
    finally:
        obs.stop()
        obs.join(5)


def test_a_pass_beside_another_writing_process(tmp_path, env, memverbs_cmd, local):
    root = tmp_path / "v"
    for i in range(150):
        write(root / f"n{i:03}.md", f"# Note {i}\n")
    script = (
        "from memverbs.server.runtime import Runtime\n"
        "rt = Runtime(); d = rt.local_dispatcher()\n"
        "for i in range(60):\n"
        "    b = d.call('remember', {'fact': f'concurrent fact {i}', 'provenance': 'test'})\n"
        "    assert not b.is_error, b.body\n"
        "rt.close()\n"
    )
    import sys

    other = subprocess.Popen([sys.executable, "-c", script], env=env)
    done = subprocess.run([*memverbs_cmd, "sync", str(root), "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert other.wait(120) == 0
    rep = json.loads(done.stdout)
    assert done.returncode == 0 and rep["created"] == 150 and rep["errors"] == 0
    assert len(local.ok("recall", query="concurrent", limit=100)["facts"]) >= 1


def test_one_watcher_for_every_synced_folder(tmp_path, local, cli_json, env, memverbs_cmd):
    write(tmp_path / "work" / "a.md", "# Work A\n")
    write(tmp_path / "home" / "a.md", "# Home A\n")
    cli_json("sync", tmp_path / "work", "--prefix", "work")
    cli_json("sync", tmp_path / "home", "--prefix", "personal")
    proc = subprocess.Popen([*memverbs_cmd, "sync", "--watch", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        starts = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert sorted(s["prefix"] for s in starts) == ["personal", "work"]
        write(tmp_path / "home" / "b.md", "# Home B\nquokkaword\n")
        write(tmp_path / "work" / "b.md", "# Work B\nwombatword\n")
        wait_for(lambda: local("get_page", slug="personal/b")[0].get("title") == "Home B", "the home folder")
        wait_for(lambda: local("get_page", slug="work/b")[0].get("title") == "Work B", "the work folder")
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.sqlite_only  # holds SQLite's own write lock from a second connection
def test_a_locked_brain_delays_a_change_and_loses_nothing(tmp_path, home):
    """Another process holds the write lock past the busy timeout: the change waits, then lands."""
    import sqlite3

    from helpers import Client

    from memverbs.server.brain.sqlite import SqliteBrain
    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.state import SyncState
    from memverbs.server.sync.watcher import Changes, FolderWatch

    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    rt = Runtime(home)
    brain = SqliteBrain.open(rt.brain_location.path, busy_timeout_ms=200)  # give up on the lock quickly
    try:
        folder = SyncState(brain, rt.source).folder(str(root), "", "sync")
        dispatcher = rt.local_dispatcher()
        dispatcher.open_brain = lambda: brain
        fp = FolderPass(dispatcher, brain, rt.source, folder)
        changes = Changes()
        w = FolderWatch(fp, changes, lambda report, why: None)
        w.full_pass("start")
        write(root / "a.md", "# A\nedited while locked\n")
        changes.touch("a.md")
        time.sleep(0.2)
        holder = sqlite3.connect(rt.brain_location.path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(BrainLocked):
                w.tick()
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        time.sleep(0.2)
        w.tick()
        assert "edited while locked" in Client(dispatcher).ok("get_page", slug="a")["body"]
    finally:
        brain.close()
        rt.close()


def test_written_through_memverbs_then_renamed_on_disk_keeps_a_conflict(tmp_path, home):
    from helpers import Client

    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.moves import WatchMoves
    from memverbs.server.sync.report import Report
    from memverbs.server.sync.state import SyncState
    from memverbs.server.sync.watcher import Changes, FolderWatch

    root = tmp_path / "v"
    write(root / "a.md", "# A\nfrom the file\n")
    rt = Runtime(home)
    try:
        brain = rt.brain()
        client = Client(rt.local_dispatcher())
        folder = SyncState(brain, rt.source).folder(str(root), "", "sync")
        changes = Changes()
        w = FolderWatch(FolderPass(rt.local_dispatcher(), brain, rt.source, folder), changes, lambda r, why: None)
        w.full_pass("start")
        client.ok("put_page", slug="a", content="# A\nfrom the agent\n")
        os.rename(root / "a.md", root / "b.md")
        changes.move("a.md", "b.md")
        time.sleep(0.2)
        for rel, moved_from in changes.settled(0.15):
            w.apply(rel, moved_from, Report(str(root)), WatchMoves(w.fp.state, folder))
        kept = SyncState(brain, rt.source).conflicts()
        assert [(c["rel_path"], c["slug"]) for c in kept] == [("b.md", "b")] and "from the agent" in kept[0]["brain_content"]
        assert "from the file" in client.ok("get_page", slug="b")["body"]
    finally:
        rt.close()
