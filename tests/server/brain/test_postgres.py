"""What only a server database can do to a brain: a newer schema, wrong credentials, the server going
away mid-call, writers in several processes, a held write lock, and doctor's view of it.

Every test runs against a real Postgres (tests/support/postgres.py); the shared behavioural suite
(every other test in tests/server) runs on it too.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from helpers import Client
from postgres import PASSWORD, PASSWORD_ROLE

from memverbs.server.brain.base import NewFact
from memverbs.server.brain.factory import locate, open_brain
from memverbs.server.brain.location import BrainLocation, redact
from memverbs.server.brain.postgres import PostgresBrain
from memverbs.server.brain.postgres_base import WRITE_LOCK
from memverbs.server.errors import BrainError, BrainMissing, VerbError
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms

POSTGRES_KINDS = ["postgres", "postgres-plain"]


@pytest.fixture(params=POSTGRES_KINDS)
def brain_backend(request) -> str:
    return request.param


def test_brain_url_selects_the_backend(tmp_path):
    home = Home(tmp_path)
    assert locate("", home, "brain.db") == BrainLocation("sqlite", path=tmp_path / "brain.db")
    assert locate("sqlite:///team.db", home, "brain.db").path == tmp_path / "team.db"
    assert locate("sqlite:////abs/b.db", home, "brain.db").path.as_posix() == "/abs/b.db"
    assert locate("postgresql://u:pw@h/db", home, "brain.db").backend == "postgres"
    assert str(locate("postgres://u:pw@h:5433/db", home, "brain.db")) == "postgres://u:***@h:5433/db"
    with pytest.raises(Exception, match="unknown scheme"):
        locate("mysql://u:hunter2@h/db", home, "brain.db")
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


def test_a_newer_schema_is_refused_untouched(brain_url):
    with psycopg.connect(brain_url, autocommit=True) as conn:
        conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('9999_from_the_future', 1)")
        conn.execute("INSERT INTO pages (source_id, slug, slug_rev, body, created_at, updated_at) VALUES ('s', 'a', 'a', 'x', 1, 1)")
        before = conn.execute("SELECT count(*) FROM pages").fetchone()[0], conn.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
    for create in (False, True):
        with pytest.raises(BrainError, match="newer memverbs") as caught:
            open_brain(BrainLocation("postgres", url=brain_url), create=create)
        assert "nothing in it was changed" in caught.value.fix
    with psycopg.connect(brain_url, autocommit=True) as conn:
        after = conn.execute("SELECT count(*) FROM pages").fetchone()[0], conn.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
    assert after == before


def test_an_empty_database_is_a_missing_brain_until_init(pg):
    server = pg
    url = server.new_database(empty=True)
    try:
        with pytest.raises(BrainMissing, match="no brain") as caught:
            open_brain(BrainLocation("postgres", url=url))
        assert "memverbs init" in caught.value.fix
        brain = open_brain(BrainLocation("postgres", url=url), create=True)
        assert brain.schema_status()["pending"] == [] and brain.counts("default") == {"pages": 0, "facts": 0}
        brain.close()
    finally:
        server.drop_database(url)


def test_wrong_credentials_are_a_clear_error_that_never_shows_the_password(pg, tmp_path, monkeypatch):
    server = pg
    wrong = "Wr0ng-" + PASSWORD[::-1]
    url = server.url("postgres", user=PASSWORD_ROLE, password=wrong)
    with pytest.raises(BrainError) as caught:
        open_brain(BrainLocation("postgres", url=url))
    text = caught.value.message + caught.value.fix
    assert "credentials" in caught.value.message and wrong not in text and "***" in text
    # ... and the same through a verb: `unavailable`, the fix, no password.
    monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path))
    monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
    rt = Runtime(Home(tmp_path))
    body, is_error = Client(rt.mcp_dispatcher("full"))("recall", query="x")
    rt.close()
    assert is_error and body["error"] == "unavailable" and wrong not in json.dumps(body)
    # The right password opens it.
    good = server.url("postgres", user=PASSWORD_ROLE, password=PASSWORD)
    with psycopg.connect(good, autocommit=True) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == PASSWORD_ROLE


def test_the_database_going_away_is_unavailable_and_the_brain_recovers(pg, home):
    server = pg
    rt = Runtime(home)
    client = Client(rt.mcp_dispatcher("full"))
    client.ok("remember", fact="before the outage", provenance="p")
    server.pg_ctl("stop")
    try:
        for verb, params in (("remember", {"fact": "during the outage", "provenance": "p"}), ("recall", {})):
            body, is_error = client(verb, **params)
            assert is_error and body["error"] == "unavailable", body
            assert "reconnects by itself" in body["suggestion"]
    finally:
        server.pg_ctl("start")
    assert client.ok("remember", fact="after the outage", provenance="p")["status"] == "inserted"
    assert [f["fact"] for f in client.ok("recall")["facts"]] == ["after the outage", "before the outage"]
    rt.close()


def test_a_held_write_lock_is_unavailable_and_loses_nothing(home, brain_url, monkeypatch):
    monkeypatch.setenv("MEMVERBS_BRAIN__BUSY_TIMEOUT_MS", "300")
    rt = Runtime(home)
    client = Client(rt.mcp_dispatcher("full"))
    client.ok("remember", fact="before the lock", provenance="p")
    holder = psycopg.connect(brain_url)  # another process in the middle of a long write
    holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
    try:
        err = client.err("remember", fact="during the lock", provenance="p")
        assert err["error"] == "unavailable" and "locked" in err["message"] and err["suggestion"].strip()
        # The message names the holder: here a plain SQL session, not a memverbs process.
        assert "waited for 300 ms" in err["message"], err["message"]
        assert f"server pid {holder.info.backend_pid}" in err["message"], err["message"]
        assert "not a memverbs server" in err["message"], err["message"]
        assert client.ok("recall")["facts"]  # reads never wait for a writer
    finally:
        holder.rollback()
        holder.close()
    assert client.ok("remember", fact="after the lock", provenance="p")["status"] == "inserted"
    assert [f["fact"] for f in client.ok("recall")["facts"]] == ["after the lock", "before the lock"]
    rt.close()


def test_remember_is_atomic_across_processes(home, env, memverbs_cmd):
    """Eight processes remember the same fact at once: exactly one inserts it."""
    cmd = [*memverbs_cmd, "remember", "Alice prefers async standups", "--provenance", "p", "--entity", "people/alice", "--json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    statuses = sorted(r["status"] for r in results)
    assert statuses == ["duplicate"] * 7 + ["inserted"]
    assert len({r["id"] for r in results}) == 1


def test_concurrent_writers_in_threads_serialise_and_stamp_in_commit_order(home):
    """Sixteen writers on one process's pool: every fact is kept, ids and recording times ascend together."""
    rt = Runtime(home)
    client = Client(rt.local_dispatcher())
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: client.ok("remember", fact=f"fact number {i}", provenance="p"), range(16)))
    rows = rt.brain().query("SELECT id, created_at FROM facts ORDER BY id")
    assert len(rows) == 16
    assert [r["created_at"] for r in rows] == sorted(r["created_at"] for r in rows)
    rt.close()


def test_page_writers_beyond_the_pool_never_starve_each_other(home, monkeypatch):
    """More concurrent put_page writers than pooled connections, on one process: every write succeeds.

    The writer holding the brain-wide lock resolves its page's links with reads; had they each
    waited for a pooled connection (all held by writers queued for the lock), the lock would be
    held for seconds per page and the queued writers would give up ("locked"). Outcomes are
    asserted, not timings: the busy timeout is the bound."""
    monkeypatch.setenv("MEMVERBS_BRAIN__POOL_SIZE", "2")
    monkeypatch.setenv("MEMVERBS_BRAIN__BUSY_TIMEOUT_MS", "4000")
    rt = Runtime(home)
    Client(rt.local_dispatcher()).ok("put_page", slug="people/alice", content="# Alice\n")
    links = " ".join(f"[[Person {n}]] [[people/p-{n}]]" for n in range(4)) + " [[Alice]]"

    def writer(w: int) -> list[dict]:
        brain = rt.open_brain()  # a server's worker thread: a brain of its own on the process's one pool
        client = Client(rt.mcp_dispatcher("full", open_brain=lambda: brain))
        try:
            return [client("put_page", slug=f"notes/w{w}-{n}", content=f"# Note {w} {n}\n\n{links}\n")
                    for n in range(3)]
        finally:
            brain.close()

    with ThreadPoolExecutor(6) as pool:
        outcomes = [o for batch in pool.map(writer, range(6)) for o in batch]
    errors = [body for body, is_error in outcomes if is_error]
    assert errors == []
    brain = rt.brain()
    assert brain.aggregate("SELECT count(*) FROM pages WHERE slug LIKE 'notes/%%'")[0] == 18
    assert {r[0] for r in brain.query("SELECT DISTINCT to_slug FROM links WHERE from_slug LIKE 'notes/%%' AND to_slug = 'people/alice'")} == {"people/alice"}
    rt.close()


def test_a_lock_timeout_caused_here_says_so(brain_url):
    """A write that times out behind a write of its own process is told so, not "another process"."""
    holder, waiter = (PostgresBrain.open(brain_url, pool_size=2, busy_timeout_ms=200) for _ in range(2))
    try:
        with holder.write():
            with pytest.raises(BrainError) as caught:
                waiter.touch_retrieved("default", ["a"], now_ms())
        assert "this very process" in caught.value.message, caught.value.message
        assert "waited for 200 ms" in caught.value.message
        stats = waiter.pool_stats()
        assert stats["size"] == 2 and stats["calls"] >= 1
    finally:
        holder.close()
        waiter.close()


def test_every_connection_bounds_its_wait_for_the_write_lock(brain_url):
    """lock_timeout is set once per connection, on the pool's and on the one a call opens when the pool
    has none free: a writer never waits for the lock longer than the busy timeout."""
    brain = PostgresBrain.open(brain_url, pool_size=1, busy_timeout_ms=250)
    try:
        with brain.connection() as pooled:
            assert pooled.execute("SHOW lock_timeout").fetchone()[0] == "250ms"
            with brain.connection() as own:  # the pool's only connection is taken: this call opens its own
                assert own is not pooled
                assert own.execute("SHOW lock_timeout").fetchone()[0] == "250ms"
    finally:
        brain.close()


def test_a_busy_timeout_of_zero_does_not_wait_for_the_write_lock(brain_url):
    """0 is "do not wait" on SQLite; Postgres's lock_timeout reads 0 as "forever", so the brain sets 1 ms."""
    brain = PostgresBrain.open(brain_url, pool_size=1, busy_timeout_ms=0)
    try:
        with brain.connection() as conn:
            assert conn.execute("SHOW lock_timeout").fetchone()[0] == "1ms"
    finally:
        brain.close()


def test_a_failed_batched_write_releases_the_lock_and_its_connection(brain_url):
    """A remember whose batch fails (text Postgres cannot hold) writes nothing, leaves the write lock
    free for other sessions and the pool's connection usable for the next write."""
    brain = PostgresBrain.open(brain_url, pool_size=1, busy_timeout_ms=250)
    try:
        with pytest.raises(VerbError):
            brain.remember_fact("default", NewFact("a\x00b", "a\x00b", "fact", "people/nul", "world", "p", None), now_ms())
        with psycopg.connect(brain_url, autocommit=True) as other:
            assert other.execute("SELECT pg_try_advisory_xact_lock(%s)", (WRITE_LOCK,)).fetchone()[0]
        with brain.connection() as conn:
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        fact = NewFact("a clean fact", "a clean fact", "fact", "people/nul", "world", "p", None)
        assert brain.remember_fact("default", fact, now_ms())[0] == "inserted"
        assert brain.remember_fact("default", fact, now_ms())[0] == "duplicate"
        assert brain.one("SELECT count(*) FROM facts")[0] == 1
    finally:
        brain.close()


def test_doctor_reports_connection_schema_and_vector_path(home, brain_backend, monkeypatch):
    from memverbs.doctor import run_checks

    checks = {c.name: c for c in run_checks(home)}
    assert checks["brain"].status == "ok" and "Postgres" in checks["brain"].detail
    assert checks["schema"].status == "ok"
    if brain_backend == "postgres-plain":
        assert checks["extensions"].status == "warn" and "exact scan" in checks["extensions"].detail
    else:
        brain = Runtime(home).brain()
        assert (checks["extensions"].status == "ok") == brain.pgvector
        brain.close()


def test_doctor_says_why_pgvector_is_not_in_use(pg, brain_backend, tmp_path):
    """Installed on the server but not creatable by the brain's role: doctor says so, with the
    statement a superuser must run; on a server without it, that it is not installed."""
    from memverbs.server.brain.postgres_health import postgres_checks

    name = "t_novector_" + tmp_path.name[-8:].replace("-", "_").lower()
    pg.admin(f'CREATE DATABASE "{name}" OWNER {PASSWORD_ROLE} TEMPLATE template0')
    try:
        url = pg.url(name, user=PASSWORD_ROLE, password=PASSWORD)
        PostgresBrain.open(url, create=True).close()  # init as a role that may not CREATE EXTENSION vector
        rows = {r[0]: r for r in postgres_checks(BrainLocation("postgres", url=url))}
        _, status, detail, fix = rows["extensions"]
        assert status == "warn"
        if pg.kind == "pgvector":
            assert "installed on the server" in detail and f"{PASSWORD_ROLE!r} may not create it" in detail, detail
            assert "is not installed" not in detail
            assert f'CREATE EXTENSION vector;  -- in database "{name}"' in fix and "superuser" in fix, fix
        else:
            assert "not installed on the Postgres server" in detail, detail
        assert rows["writers"][1] == "ok" and "queued for the write lock now" in rows["writers"][2]
    finally:
        pg.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_doctor_sums_up_what_calls_waited_for(home, monkeypatch):
    """The usage log's wait keys, written by MCP calls on a Postgres brain, are summed up by doctor."""
    from memverbs.doctor import run_checks
    from memverbs.server import usage

    rt = Runtime(home)
    Client(rt.mcp_dispatcher("full")).ok("remember", fact="a logged write", provenance="p")
    rt.close()
    for waited in ({"pool_wait_ms": 25_000}, {"lock_wait_ms": 40_000}):  # longer than any real call here
        usage.record(home.usage_log, brain_id="b", verb="remember", surface="full", remote=True, ok=True,
                     latency_ms=300, source_id="default", result=None, waited=waited)
    writers = {c.name: c for c in run_checks(home)}["writers"]
    assert writers.status == "warn" and "brain.pool_size" in writers.fix
    assert "waited for a pooled connection (longest 25000 ms)" in writers.detail, writers.detail
    assert "waited for the write lock (longest 40000 ms)" in writers.detail, writers.detail


def test_the_vector_index_is_pgvector_when_the_server_has_it(home, brain_backend):
    rt = Runtime(home)
    brain = rt.brain()
    kind = brain.vector_index_kind()
    if brain_backend == "postgres-plain":
        assert not brain.pgvector and "exact scan" in kind
    elif brain.pgvector:
        assert "HNSW" in kind
    rt.close()


def test_hooks_open_no_pool_until_they_query(home, brain_url):
    """Opening a brain checks the schema over one short connection; the pool waits for the first query."""
    brain = PostgresBrain.open(brain_url, pool_size=1)
    assert brain._shared is None
    brain.counts("default")
    assert brain._shared is not None
    brain.close()


def test_a_second_process_sees_writes_and_shares_cursors(home, env, memverbs_cmd):
    """Two processes on one brain: a page written by one is read, and delta-cursored, by the other."""
    local = Client(Runtime(home).local_dispatcher())
    first = local.ok("delta", session_id="s-1")
    assert first["pages"] == []
    put = subprocess.run(
        [*memverbs_cmd, "remember", "written elsewhere", "--provenance", "p", "--json"], env=env, capture_output=True, text=True
    )
    assert put.returncode == 0, put.stderr
    seen = local.ok("recall")["facts"]
    assert [f["fact"] for f in seen] == ["written elsewhere"]
    delta = subprocess.run(
        [*memverbs_cmd, "delta", "--session-id", "s-1", "--json"], env=env, capture_output=True, text=True
    )
    assert delta.returncode == 0, delta.stderr
    assert [f["fact"] for f in json.loads(delta.stdout)["facts"]] == ["written elsewhere"]


def test_text_holding_nul_is_the_callers_error_and_nothing_is_written(local, remote, runtime):
    """Postgres text cannot hold U+0000 (SQLite's can): invalid_params with a fix, never unavailable."""
    for client, tool, params in (
        (remote, "put_page", {"slug": "people/nul", "content": "# Nul\nbefore\x00after\n"}),
        (local, "remember", {"fact": "a\x00b", "provenance": "chat", "entity": "people/nul"}),
    ):
        body, is_error = client(tool, **params)
        assert is_error and body["error"] == "invalid_params" and "NUL" in body["message"], body
    assert runtime.brain().one("SELECT count(*) FROM pages")[0] == 0
    assert runtime.brain().one("SELECT count(*) FROM facts")[0] == 0


def test_a_write_begun_inside_a_write_joins_it(brain_url):
    """Whatever a write's block calls runs in its transaction: the reads, and a write of any kind (one
    that began its own transaction would commit the outer one's statements early, or deadlock on the lock)."""
    brain = PostgresBrain.open(brain_url, pool_size=1, busy_timeout_ms=500)
    fact = NewFact("joined the outer write", "joined the outer write", "fact", None, "world", "p", None)
    try:
        with pytest.raises(RuntimeError), brain.write() as db:
            db.execute("INSERT INTO projects (source_id, key, slug, name, root, created_at, updated_at) "
                       "VALUES ('default', 'path:/a', 'projects/a', 'a', '/a', 1, 1)")
            assert brain.remember_fact("default", fact, now_ms())[0] == "inserted"  # batched or one statement
            assert brain.one("SELECT count(*) FROM facts")[0] == 1  # a read sees the write's own rows
            raise RuntimeError("roll the outer write back")
        assert brain.one("SELECT count(*) FROM facts")[0] == 0
        assert brain.one("SELECT count(*) FROM projects")[0] == 0
    finally:
        brain.close()
