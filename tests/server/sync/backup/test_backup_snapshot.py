"""`export --full` is one snapshot of the brain: writes that land while it reads are in it whole or
not at all, so every backup restores, with every table matching.

The deterministic case lets another connection write (a new page with its chunks and links, a
fact, a move) the moment the export has read the pages and before it reads the rest: a backup
read table by table then holds chunks of a page it lacks, and its import died on a foreign key.
The live case keeps writers busy for the whole export.
"""

from __future__ import annotations

import threading
import time

from backups import brain_state
from helpers import Client, init_home

from memverbs.cli.main import main
from memverbs.server.runtime import Runtime


def _write_more(runtime: Runtime, n: int) -> None:
    client = Client(runtime.local_dispatcher())
    client.ok("put_page", slug=f"late/page-{n}", content=f"# Late {n}\n\nWritten during the export. See [[people/alice]].\n")
    client.ok("remember", fact=f"A late fact {n}", provenance="test", entity=f"late/page-{n}")
    runtime.brain().move_facts(runtime.source, f"late/page-{n}", "people/alice", "refiled", int(time.time() * 1000))


def _hook_after_pages(monkeypatch, brain, write) -> list[int]:
    """Run `write` on another thread (another connection) once the export has read the pages table."""
    done: list[int] = []
    cls = type(brain)
    original = cls.query
    main_thread = threading.current_thread()

    def query(self, sql, params=()):
        rows = original(self, sql, params)
        if not done and threading.current_thread() is main_thread and "FROM pages" in sql and "ORDER BY id" in sql:
            done.append(1)
            worker = threading.Thread(target=write)
            worker.start()
            worker.join()
        return rows

    monkeypatch.setattr(cls, "query", query)
    return done


def _restore(tmp_path, monkeypatch, url, folder) -> dict:
    monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path / "restored"))
    if url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
    else:
        monkeypatch.delenv("MEMVERBS_BRAIN__URL", raising=False)
    init_home(tmp_path / "restored")
    assert main(["import", str(folder)]) == 0
    rt = Runtime()
    try:
        return brain_state(rt.brain())
    finally:
        rt.close()


def test_a_write_during_the_export_is_not_half_in_the_backup(tmp_path, home, local, runtime, monkeypatch, capsys,
                                                             other_brain_url):
    local.ok("put_page", slug="people/alice", content="# Alice\n\nFirst.\n")
    local.ok("remember", fact="Alice likes tea", provenance="chat", entity="people/alice")
    writer = Runtime(home)  # its own connection, as another process's would be
    try:
        fired = _hook_after_pages(monkeypatch, runtime.brain(), lambda: _write_more(writer, 1))
        assert main(["export", str(tmp_path / "out"), "--full"]) == 0
        assert fired
    finally:
        writer.close()
    monkeypatch.undo()
    from backups import Backup

    backup = Backup.load(tmp_path / "out")
    assert "late/page-1" not in repr(backup.rows) and "A late fact 1" not in repr(backup.rows)  # one moment: before
    restored = _restore(tmp_path, monkeypatch, other_brain_url, tmp_path / "out")
    assert {t: restored[t] for t in backup.rows} == {t["name"]: (t["rows"], t["sha256"]) for t in backup.manifest["tables"]}
    capsys.readouterr()


def test_a_backup_taken_under_writes_restores_with_every_table_matching(tmp_path, home, local, runtime, monkeypatch, capsys,
                                                                        other_brain_url):
    for i in range(20):
        local.ok("put_page", slug=f"seed/p{i}", content=f"# Seed {i}\n\nSee [[seed/p{(i + 1) % 20}]].\n")
        local.ok("remember", fact=f"Seed fact {i}", provenance="test", entity=f"seed/p{i}")
    stop = threading.Event()
    written: list[int] = []

    def writers() -> None:
        rt = Runtime(home)
        try:
            n = 0
            while not stop.is_set():
                n += 1
                _write_more(rt, n)
                written.append(n)
        finally:
            rt.close()

    worker = threading.Thread(target=writers)
    worker.start()
    try:
        while len(written) < 2:
            time.sleep(0.01)
        for k in range(2):
            assert main(["export", str(tmp_path / f"out{k}"), "--full"]) == 0
    finally:
        stop.set()
        worker.join()
    from backups import Backup

    for k in range(2):
        backup = Backup.load(tmp_path / f"out{k}")
        restored = _restore(tmp_path / f"r{k}", monkeypatch, other_brain_url if k == 0 else None, tmp_path / f"out{k}")
        assert {t: restored[t] for t in backup.rows} == {t["name"]: (t["rows"], t["sha256"]) for t in backup.manifest["tables"]}
    assert len(written) >= 2
    capsys.readouterr()
