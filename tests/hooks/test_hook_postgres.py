"""`memverbs hook` on a Postgres brain: the same pack, in a cold process, and silence when the server is away."""

import json
import subprocess
import sys

import payloads
import pytest
from helpers import ROOMY_DEADLINE, page


@pytest.fixture
def brain_backend() -> str:
    return "postgres"


def run_hook(memverbs_cmd, env, *, extra_env=None, moment="session-start", payload=payloads.CLAUDE_SESSION_START):
    return subprocess.run(
        [*memverbs_cmd, "hook", moment, "--harness", "claude", *ROOMY_DEADLINE],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**env, "MEMVERBS_HOOK_HEARTBEAT_INTERVAL_S": "0", **(extra_env or {})},
        timeout=30,
    )


def test_session_start_packs_from_postgres(memverbs_cmd, env, local):
    page(local, "people/alice", "Alice Example", summary="Runs payments at Acme.", aliases=["Ali"])
    local.ok("remember", fact="Alice prefers async standups", provenance="chat", entity="people/alice")
    proc = run_hook(memverbs_cmd, env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "`people/alice`" in context and "async standups" in context


def test_an_unreachable_server_leaves_the_session_alone(memverbs_cmd, env, tmp_path):
    gone = f"postgresql://postgres@/nowhere?host={tmp_path}&port=1"  # no server listens on this socket
    proc = run_hook(memverbs_cmd, env, extra_env={"MEMVERBS_BRAIN__URL": gone})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_a_heartbeat_never_answers_from_a_stale_sqlite_file_beside_a_postgres_brain(memverbs_cmd, env, local, home):
    """A home moved to Postgres may still hold its old brain.db. The heartbeat's one-read fast path
    reads SQLite files only: here it must ask the Postgres brain, not the file that says "unchanged"."""
    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation
    from memverbs.server.context import LOCAL_LANE
    from memverbs.server.timeparse import now_ms

    stale = open_brain(BrainLocation("sqlite", path=home.root / "brain.db"), create=True)
    stale.save_cursor("default", LOCAL_LANE, payloads.CLAUDE_PROMPT["session_id"], 2**62, "", now_ms())  # "nothing since"
    stale.close()
    assert run_hook(memverbs_cmd, env).returncode == 0
    local.ok("remember", fact="Atlas moved to Q3", provenance="chat", entity="projects/atlas")
    proc = run_hook(memverbs_cmd, env, moment="heartbeat", payload=payloads.CLAUDE_PROMPT)
    assert proc.returncode == 0 and "Atlas moved to Q3" in proc.stdout, (proc.stdout, proc.stderr)


# -- the heartbeat's one-read change check, on Postgres (server/brain/plain.py) ----------------------------


def last_code(home) -> str:
    return json.loads((home.logs / "hooks.jsonl").read_text().splitlines()[-1])["code"]


def settle_cursor(runtime) -> None:
    """Move the session's cursor past every write so far (the pack leaves it trailing by delta's 2 s
    in-flight lag, which would make the next heartbeats answer "maybe changed" for a while)."""
    from memverbs.server.context import LOCAL_LANE
    from memverbs.server.timeparse import now_ms

    runtime.brain().save_cursor("default", LOCAL_LANE, payloads.CLAUDE_PROMPT["session_id"], now_ms(), "", now_ms())


def test_an_unchanged_heartbeat_on_postgres_is_one_read_and_a_change_still_comes(memverbs_cmd, env, local, home, runtime):
    local.ok("remember", fact="Alice prefers async standups", provenance="chat", entity="people/alice")
    assert run_hook(memverbs_cmd, env).returncode == 0
    settle_cursor(runtime)
    quiet = run_hook(memverbs_cmd, env, moment="heartbeat", payload=payloads.CLAUDE_PROMPT)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    assert last_code(home) == "unchanged"  # answered by the check, before any brain is opened
    # a fact, then a page: each is seen by the very next prompt
    local.ok("remember", fact="Atlas moved to Q3", provenance="chat", entity="projects/atlas")
    moved = run_hook(memverbs_cmd, env, moment="heartbeat", payload=payloads.CLAUDE_PROMPT)
    assert "Atlas moved to Q3" in moved.stdout and last_code(home) == "ok"
    settle_cursor(runtime)
    page(local, "projects/zephyr", "Zephyr", summary="A brand-new project.")
    edited = run_hook(memverbs_cmd, env, moment="heartbeat", payload=payloads.CLAUDE_PROMPT)
    assert "projects/zephyr" in edited.stdout and last_code(home) == "ok"


def test_the_change_check_follows_deltas_keyset(local, runtime, home):
    """In-process, the Postgres twin against the cursor states delta distinguishes: no cursor, nothing
    after it, a fact after it, a page in the cursor's own millisecond after its slug."""
    from memverbs.server.brain.plain import open_plain
    from memverbs.server.context import LOCAL_LANE
    from memverbs.server.timeparse import now_ms

    where = runtime.brain_location
    assert where.backend == "postgres"

    def changed_in(where, source, lane, session):
        plain = open_plain(where)
        assert plain is not None
        try:
            return plain.changed(source, lane, session)
        finally:
            plain.close()

    brain = runtime.brain()
    assert changed_in(where, "default", LOCAL_LANE, "s-none") is None  # no cursor: only delta can tell
    page(local, "people/bea", "Bea", summary="Reviews the infra budget.")
    at = brain.one("SELECT updated_at FROM pages WHERE slug = 'people/bea'")[0]
    brain.save_cursor("default", LOCAL_LANE, "s-1", at, "people/bea", now_ms())
    assert changed_in(where, "default", LOCAL_LANE, "s-1") is False
    brain.save_cursor("default", LOCAL_LANE, "s-1", at, "people/ann", now_ms())  # same instant, slug before: changed
    assert changed_in(where, "default", LOCAL_LANE, "s-1") is True
    brain.save_cursor("default", LOCAL_LANE, "s-1", at, "", now_ms())  # no slug: strictly after the instant
    assert changed_in(where, "default", LOCAL_LANE, "s-1") is False
    brain.save_cursor("default", LOCAL_LANE, "s-1", at - 1, "", now_ms())
    assert changed_in(where, "default", LOCAL_LANE, "s-1") is True
    brain.save_cursor("default", LOCAL_LANE, "s-1", now_ms() + 1, "", now_ms())
    assert changed_in(where, "default", LOCAL_LANE, "s-1") is False
    assert changed_in(where, "other-source", LOCAL_LANE, "s-1") is None
    local.ok("remember", fact="Bea approved the budget", provenance="chat", entity="people/bea")
    brain.save_cursor("default", LOCAL_LANE, "s-2", 0, "", now_ms())
    assert changed_in(where, "default", LOCAL_LANE, "s-2") is True


def test_the_change_check_walks_the_indexes(runtime, local):
    """The check reads the newest entry of pages_changed and of facts_created, walking each index
    backwards (seq scans off: on a brain this small a scan costs the planner the same; on 20K pages
    and facts it picks this plan itself, 7 buffers, see the comment on PG_CHANGED)."""
    from memverbs.server.brain.plain import PG_CHANGED

    brain = runtime.brain()
    with brain.connection() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + PG_CHANGED.replace("?", "%s"), ("default", "local", "s")).fetchall())
    assert "Index Only Scan Backward using pages_changed" in plan, plan
    assert "Index Only Scan Backward using facts_created" in plan, plan


def test_an_unchanged_heartbeat_imports_psycopg_but_not_the_brain(memverbs_cmd, env, local, home, runtime):
    """The check's import bill on Postgres: the driver, not the pool, the PostgresBrain stores, keyring,
    the MCP SDK or pydantic-settings (`python -X importtime`, what the hook process really loaded)."""
    assert run_hook(memverbs_cmd, env).returncode == 0
    settle_cursor(runtime)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memverbs", "hook", "heartbeat", "--harness", "claude"],
        input=json.dumps(payloads.CLAUDE_PROMPT), capture_output=True, text=True,
        env={**env, "MEMVERBS_HOOK_HEARTBEAT_INTERVAL_S": "0"}, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "" and last_code(home) == "unchanged"
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "psycopg" in loaded
    heavy = {"psycopg_pool", "memverbs.server.brain.postgres", "memverbs.server.dispatch", "keyring", "mcp",
             "pydantic_settings", "numpy", "httpx"}
    assert heavy & loaded == set()


def test_the_reflex_points_to_what_a_prompt_names_on_postgres(memverbs_cmd, env, local):
    """No fast path on Postgres: the runner reads the name index through the brain, one message with the delta."""
    page(local, "companies/kelpforge", "Kelpforge", type="company", summary="Marine robotics.")
    page(local, "people/secret-agent", "Secret Agent", type="person", visibility="private", summary="Top secret.")
    prompt = {**payloads.CLAUDE_PROMPT, "prompt": "How are Kelpforge and Secret Agent doing?"}
    proc = run_hook(memverbs_cmd, env, moment="heartbeat", payload=prompt)
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "`companies/kelpforge`" in context and "Marine robotics." in context and "secret" not in context.lower()
    again = run_hook(memverbs_cmd, env, moment="heartbeat", payload=prompt)
    assert "Named in this prompt" not in again.stdout  # given once in this session
