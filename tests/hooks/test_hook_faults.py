"""Hooks classify what went wrong by the error's type, never by searching its message, and a
deadline is reported as a deadline."""

import json
import os
import sqlite3
import subprocess
import sys
import time

import payloads
import pytest
from helpers import init_home

from memverbs.hooks import runner
from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked


def last_code(home) -> str:
    return json.loads((home.logs / "hooks.jsonl").read_text().splitlines()[-1])["code"]


def run_hook(memverbs_cmd, env, *args, payload=payloads.CLAUDE_SESSION_START):
    proc = subprocess.run(
        [*memverbs_cmd, "hook", *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_types_not_words_decide_the_code():
    assert runner._classify(BrainLocked("brain x failed", "")) == "brain_locked"
    assert runner._classify(BrainCorrupt("brain /home/locked/brain.db is corrupt", "")) == "brain_corrupt"
    assert runner._classify(BrainError("brain /srv/locked-away/brain.db cannot be written", "")) == "brain_error"


def test_a_corrupt_brain_in_a_folder_named_locked_is_corrupt(tmp_path, memverbs_cmd):
    home = init_home(tmp_path / "locked")
    for suffix in ("", "-wal", "-shm"):
        (home.root / f"brain.db{suffix}").unlink(missing_ok=True)
    (home.root / "brain.db").write_bytes(b"\x00garbage" * 512)
    env = {**os.environ, "MEMVERBS_HOME": str(home.root)}
    run_hook(memverbs_cmd, env, "session-start", "--harness", "claude")
    assert last_code(home) == "brain_corrupt"


def test_a_lock_met_inside_a_verb_is_brain_locked(home, monkeypatch, capfd):
    # The verb's failure travels as an `unavailable` envelope; the hook still sees its type.
    def locked(ctx, params):
        raise BrainLocked("brain is busy", "retry")

    monkeypatch.setattr("memverbs.server.dispatch.handler", lambda op: locked)
    monkeypatch.setattr(sys, "stdin", None)
    assert runner.run_hook(["session-start", "--harness", "plain", "--session-id", "s1"]) == 0
    assert capfd.readouterr().out == ""
    assert last_code(home) == "brain_locked"


def test_a_deadline_inside_a_verb_is_a_deadline(home, monkeypatch, capfd):
    # A verb that never returns: the alarm must surface as `deadline`, not be swallowed by
    # dispatch's boundary for bugs and reported as an internal error.
    def stuck(ctx, params):
        while True:
            time.sleep(0.005)

    monkeypatch.setattr("memverbs.server.dispatch.handler", lambda op: stuck)
    monkeypatch.setattr(sys, "stdin", None)
    started = time.monotonic()
    assert runner.run_hook(["session-start", "--harness", "plain", "--session-id", "s1", "--deadline-ms", "300"]) == 0
    assert time.monotonic() - started < 30  # it came back at all (the bound itself is measured in benchmarks/)
    assert capfd.readouterr().out == ""
    assert last_code(home) == "deadline"


@pytest.mark.parametrize("deadline_ms", [200, 600])
def test_a_lock_is_never_waited_on_past_the_deadline(memverbs_cmd, env, home, local, runtime, deadline_ms):
    """The busy wait gets what is left of the budget, so the run ends locked or on its deadline, silently."""
    local.ok("remember", fact="x", provenance="p")
    runtime.close()
    db = sqlite3.connect(home.root / "brain.db", isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("BEGIN EXCLUSIVE")
    try:
        run_hook(memverbs_cmd, env, "session-start", "--harness", "claude", "--deadline-ms", str(deadline_ms))
    finally:
        db.execute("ROLLBACK")
        db.close()
    # Which comes first depends on how much of a short budget start-up used; never anything else.
    # (The wall time of each case is measured by benchmarks/faults.py.)
    assert last_code(home) in ("brain_locked", "deadline")


def test_storage_errors_are_typed_by_sqlites_code_not_its_words(tmp_path):
    from memverbs.server.brain.sqlite import translate

    bad = tmp_path / "locked-and-busy" / "brain.db"  # words in the path must not matter
    bad.parent.mkdir()
    bad.write_bytes(b"\x00garbage" * 512)
    try:
        sqlite3.connect(bad).execute("PRAGMA journal_mode").fetchone()
    except sqlite3.DatabaseError as exc:
        assert isinstance(translate(exc, bad), BrainCorrupt)
    else:
        raise AssertionError("garbage opened as a database")
    holder = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        sqlite3.connect(tmp_path / "b.db", timeout=0.01).execute("SELECT * FROM t").fetchall()
    except sqlite3.OperationalError as exc:
        assert isinstance(translate(exc, tmp_path / "b.db"), BrainLocked)
    else:
        raise AssertionError("the exclusive lock did not block the reader")
    finally:
        holder.execute("ROLLBACK")
