"""`memverbs hook` on a Postgres brain: the same pack, in a cold process, and silence when the server is away."""

import json
import subprocess

import pytest

import payloads
from helpers import page


@pytest.fixture
def brain_backend() -> str:
    return "postgres"


def run_hook(memverbs_cmd, env, *, extra_env=None):
    return subprocess.run(
        [*memverbs_cmd, "hook", "session-start", "--harness", "claude"],
        input=json.dumps(payloads.CLAUDE_SESSION_START),
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
