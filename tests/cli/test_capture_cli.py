"""`memverbs capture`: backfill from files or the harness's own store, idempotent, and --dry-run stores nothing."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from runcli import run_cli

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "capture"  # recorded from the real binaries


def facts(env) -> list[str]:
    return [f["fact"] for f in json.loads(run_cli("recall", "--entity", "people/me", "--json", env=env).stdout)["facts"]]


def test_backfill_from_the_claude_store_is_idempotent(env, tmp_path):
    store = tmp_path / "user" / ".claude" / "projects" / "-bench-project"
    store.mkdir(parents=True)
    for name in ("claude-decisions", "claude-chitchat"):
        (store / f"{name}.jsonl").write_text((DATA / f"{name}.jsonl").read_text())
    env = {**env, "HOME": str(tmp_path / "user")}

    dry = run_cli("capture", "--harness", "claude", "--dry-run", "--json", env=env)
    assert dry.returncode == 0, dry.stderr
    sessions = json.loads(dry.stdout)["sessions"]
    assert [s["status"] for s in sessions] == ["would_capture", "would_capture"]
    assert "visibility: private" in sessions[0]["page_markdown"]
    assert facts(env) == []  # a dry run stores nothing

    first = run_cli("capture", "--harness", "claude", env=env)
    assert first.returncode == 0 and "captured" in first.stdout, first.stdout + first.stderr
    assert sorted(facts(env)) == ["The staging database lives on db-staging.internal.",
                                  "We decided to deploy from the main branch only."]
    again = json.loads(run_cli("capture", "--harness", "claude", "--json", env=env).stdout)["sessions"]
    assert [s["status"] for s in again] == ["unchanged", "unchanged"]
    assert len(facts(env)) == 2


def test_paths_since_and_refusals(env, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text((DATA / "codex-decision.jsonl").read_text())
    old = time.time() - 10 * 86400
    os.utime(path, (old, old))
    out = run_cli("capture", str(path), env=env)
    assert out.returncode == 0 and "codex" in out.stdout and len(facts(env)) == 2, out.stdout + out.stderr

    missing = run_cli("capture", str(tmp_path / "nope.jsonl"), env=env)
    assert missing.returncode == 1 and "no such transcript" in missing.stderr and "fix:" in missing.stderr
    bad = run_cli("capture", "--since", "not-a-time", env=env)
    assert bad.returncode == 2
    empty = run_cli("capture", "--harness", "codex", "--since", "1d", env={**env, "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path)})
    assert empty.returncode == 0 and empty.stdout.strip() == "no transcripts found"

    run_cli("config", "set", "capture.enabled", "false", env=env)
    off = run_cli("capture", str(path), env=env)
    assert off.returncode == 1 and "capture is off" in off.stderr


def test_backfill_reads_every_session_of_the_opencode_and_openclaw_sqlite_stores(env, tmp_path):
    """No path: opencode.db and OpenClaw's agent store are read too, session by session; a second run
    stores nothing, a session another session's writes leave alone stays unchanged, and --since
    judges each session by its own last event."""
    import sqlite3

    from openclaw_support import opencode_store, transcript_store

    an_hour_ago = int((time.time() - 3600) * 1000)  # relative to now: the test holds on any day
    oc = opencode_store(tmp_path / "data", DATA / "opencode-store.json", newest_ms=an_hour_ago)
    with sqlite3.connect(oc) as db:  # a subagent's session: its "user" is the agent that delegated, never kept
        db.execute("INSERT INTO session VALUES ('ses_child', 'ses_dcbf5fb4fffe1QmqHUqZJLMb31', '/bench/project', 1, 1)")
        db.execute("INSERT INTO message VALUES ('msg_c', 'ses_child', 1, 1, '{\"role\":\"user\"}')")
        db.execute("INSERT INTO part VALUES ('prt_c', 'msg_c', 'ses_child', 1, 1, '{\"type\":\"text\",\"text\":\"We decided to use Rust.\"}')")
    spaces = tmp_path / "openclaw.jsonl"
    spaces.write_text((DATA / "openclaw-decision.jsonl").read_text().replace("use tabs", "use spaces"))
    ten_days_ago = int((time.time() - 10 * 86400) * 1000)
    claw = transcript_store(tmp_path / "state", spaces, created_ms=ten_days_ago)
    env = {**env, "HOME": str(tmp_path / "user"), "XDG_DATA_HOME": str(tmp_path / "data"), "OPENCLAW_STATE_DIR": str(tmp_path / "state")}

    def sessions(*args: str) -> list[tuple]:
        out = run_cli("capture", *args, "--json", env=env)
        assert out.returncode == 0, out.stderr
        return [(s["harness"], s["session_id"], s["status"]) for s in json.loads(out.stdout)["sessions"]]

    sid = "ses_dcbf5fb4fffe1QmqHUqZJLMb31"
    assert sessions("--dry-run") == [("openclaw", "other", "would_capture"), ("openclaw", "rec-1", "would_capture"),
                                     ("opencode", sid, "would_capture")]
    assert facts(env) == []
    assert sessions("--since", "1d", "--dry-run") == [("opencode", sid, "would_capture")]
    assert sessions("--harness", "openclaw", "--dry-run", str(claw)) == sessions("--harness", "openclaw", "--dry-run")

    assert [s[2] for s in sessions()] == ["captured"] * 3
    assert sorted(facts(env)) == ["We decided to use spaces.", "We decided to use tabs."]
    assert [s[2] for s in sessions()] == ["unchanged"] * 3
    with sqlite3.connect(claw) as db:  # the other session goes on; rec-1's rows are as they were
        db.execute("INSERT INTO transcript_events VALUES ('other', 1, '{\"type\":\"custom\"}', 0, NULL, NULL, NULL)")
    assert sessions() == [("openclaw", "other", "captured"), ("openclaw", "rec-1", "unchanged"), ("opencode", sid, "unchanged")]
    assert sorted(facts(env)) == ["We decided to use spaces.", "We decided to use tabs."]
