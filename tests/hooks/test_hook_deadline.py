"""A hook's deadline holds while another process holds the brain's write lock, on both backends.

The harness waits from the moment it starts the hook process, so the deadline holds for the whole
process: the interpreter's start and exit are on its clock (they took the heartbeat to 3.17 s
against its 2.5 s). The hook answers or gives up within it, exits 0, prints a whole answer or
nothing, and no driver text reaches stderr. SQLite's busy wait is C code no signal interrupts, so
each lock wait must get only what is left of the deadline; a Postgres call the deadline cuts short
must not make psycopg log to stderr.
"""

import json
import subprocess
import sys
import time
from contextlib import contextmanager

import payloads
import pytest

from memverbs.hooks.fastpath import DEFAULT_DEADLINE_MS

# What a loaded machine adds to the whole process past the deadline: the fork and exec before the
# interpreter runs (the deadline's clock starts at its start), scheduling.
WALL_SLACK_S = 0.25
# WALL_SLACK_S less the time before the interpreter runs: how far the hook's own clock (its log line) may
# pass the deadline.
CLOCK_SLACK_MS = 200

BACKENDS = pytest.mark.parametrize("brain_backend", ["sqlite", "postgres"], indirect=True)


def last_line(home) -> dict:
    return json.loads((home.logs / "hooks.jsonl").read_text().splitlines()[-1])


@contextmanager
def write_lock_held(home, brain_url):
    """Another process's writer holding the lock every brain write needs: SQLite's (BEGIN IMMEDIATE),
    or the Postgres brain's advisory write lock."""
    if brain_url is None:
        import sqlite3

        holder = sqlite3.connect(home.root / "brain.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    import psycopg

    from memverbs.server.brain.postgres_base import WRITE_LOCK

    with psycopg.connect(brain_url) as holder:  # not autocommit: the lock lasts until the rollback
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        try:
            yield
        finally:
            holder.rollback()


@BACKENDS
@pytest.mark.parametrize("deadline_ms", [1_000, None])  # None: the default, as the installers leave it
@pytest.mark.parametrize(("moment", "payload"), [("session-start", payloads.CLAUDE_SESSION_START),
                                                  ("heartbeat", payloads.CLAUDE_PROMPT)])
def test_a_held_write_lock_never_outlasts_the_deadline(memverbs_cmd, env, home, local, runtime, brain_url, moment,
                                                        payload, deadline_ms):
    local.ok("remember", fact="Alice prefers async standups", provenance="chat", entity="people/alice")
    runtime.close()
    flags = [] if deadline_ms is None else ["--deadline-ms", str(deadline_ms)]
    deadline_ms = deadline_ms or DEFAULT_DEADLINE_MS
    with write_lock_held(home, brain_url):
        started = time.monotonic()
        proc = subprocess.run([*memverbs_cmd, "hook", moment, "--harness", "claude", *flags],
                              input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60)
        wall = time.monotonic() - started
    line = last_line(home)
    assert proc.returncode == 0
    assert proc.stderr == "", proc.stderr  # no driver message, no traceback
    if proc.stdout:  # what the reads could gather arrives whole (the lock only stops the cursor's writes)
        assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"]
        assert line["code"] == "ok"
    assert line["ms"] <= deadline_ms + CLOCK_SLACK_MS, line
    assert wall <= deadline_ms / 1000 + WALL_SLACK_S, wall


# A verb stuck inside a Postgres query: the deadline's alarm lands in psycopg's wait, and the
# connection it leaves mid-query is rolled back and discarded by the pool, which logs it.
STUCK_IN_THE_DRIVER = """
import sys
import memverbs.server.dispatch as dispatch
from memverbs.hooks import runner

def stuck(ctx, params):
    ctx.brain.one("SELECT pg_sleep(30)")

dispatch.handler = lambda op: stuck
sys.exit(runner.run_hook(["session-start", "--harness", "plain", "--session-id", "s1", "--deadline-ms", "600"]))
"""


@pytest.mark.parametrize("brain_backend", ["postgres"], indirect=True)
def test_a_deadline_that_cuts_a_postgres_call_short_leaves_stderr_empty(env, home, brain_url):
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", STUCK_IN_THE_DRIVER], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=env, timeout=60)
    wall = time.monotonic() - started
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert last_line(home)["code"] == "deadline"
    # run_hook called directly: the import of memverbs and the interpreter's teardown are not on its clock here
    assert wall <= 0.6 + 2.5, wall
