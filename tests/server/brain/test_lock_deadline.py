"""A brain opened with a deadline (a hook's) waits for no lock past it, however many writes meet the lock."""

import time

import pytest

from memverbs.server.brain.factory import locate, open_brain
from memverbs.server.errors import BrainLocked
from memverbs.server.timeparse import now_ms

BUSY_MS = 5_000  # what each wait would last without the deadline


@pytest.fixture
def lock_holder(home, brain_url):
    """Hold the write lock every write needs, from another connection, until the test ends."""
    if brain_url is None:
        import sqlite3

        holder = sqlite3.connect(home.root / "brain.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        yield
        holder.execute("ROLLBACK")
        holder.close()
        return
    import psycopg

    from memverbs.server.brain.postgres_base import WRITE_LOCK

    with psycopg.connect(brain_url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        yield
        holder.rollback()


def test_every_lock_wait_ends_by_the_deadline(home, runtime, lock_holder):
    where = locate(runtime.settings.brain.url, home, runtime.settings.brain.path)
    brain = open_brain(where, busy_timeout_ms=BUSY_MS, pool_size=1, deadline=time.monotonic() + 0.4)
    try:
        started = time.monotonic()
        for _ in range(3):  # a verb that skips a write it could not make goes on to the next one
            with pytest.raises(BrainLocked):
                brain.save_cursor("default", "local", "s1", now_ms(), "", now_ms())
        assert time.monotonic() - started < 1.5  # three full waits would be 15 s; the deadline leaves 0.4
        assert brain.page("default", "people/nobody") is None  # reads still answer
    finally:
        brain.close()
