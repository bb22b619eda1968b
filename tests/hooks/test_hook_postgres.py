"""`memverbs hook` on a Postgres brain: the same pack, in a cold process, and silence when the server is away."""

import json
import subprocess

import payloads
import pytest
from helpers import page


@pytest.fixture
def brain_backend() -> str:
    return "postgres"


def run_hook(memverbs_cmd, env, *, extra_env=None, moment="session-start", payload=payloads.CLAUDE_SESSION_START):
    return subprocess.run(
        [*memverbs_cmd, "hook", moment, "--harness", "claude"],
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
    from memverbs.server.brain.factory import BrainLocation, open_brain
    from memverbs.server.context import LOCAL_LANE
    from memverbs.server.timeparse import now_ms

    stale = open_brain(BrainLocation("sqlite", path=home.root / "brain.db"), create=True)
    stale.save_cursor("default", LOCAL_LANE, payloads.CLAUDE_PROMPT["session_id"], 2**62, "", now_ms())  # "nothing since"
    stale.close()
    assert run_hook(memverbs_cmd, env).returncode == 0
    local.ok("remember", fact="Atlas moved to Q3", provenance="chat", entity="projects/atlas")
    proc = run_hook(memverbs_cmd, env, moment="heartbeat", payload=payloads.CLAUDE_PROMPT)
    assert proc.returncode == 0 and "Atlas moved to Q3" in proc.stdout, (proc.stdout, proc.stderr)
