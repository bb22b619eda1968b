"""The capture worker's choice of transcript."""

from __future__ import annotations

from pathlib import Path

from openclaw_support import opencode_store, transcript_store

from memverbs.server.capture.worker import run_job

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "capture"


def test_a_named_transcript_that_is_gone_falls_back_to_the_harness_store(home, local, tmp_path, monkeypatch):
    """A hook may name a file that no longer exists (a session file moved or removed at a reset): the
    worker reads the session from the harness's own store instead of giving up."""
    transcript_store(tmp_path / "state", DATA / "openclaw-decision.jsonl")
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "state"))
    job = {"harness": "openclaw", "session_id": "rec-1", "transcript_path": str(tmp_path / "gone.jsonl"), "home": str(home.root)}
    assert run_job(job) == "ok"
    assert [f["fact"] for f in local.ok("recall", entity="people/me")["facts"]] == ["We decided to use tabs."]


def test_a_subagents_session_is_not_captured(home, local, tmp_path, monkeypatch):
    """opencode runs a subagent in a session of its own (`parent_id` set) and its plugin sees that
    session go idle too: its "user" is the agent that delegated, so nothing of it is kept."""
    import sqlite3

    db = opencode_store(tmp_path / "data", DATA / "opencode-store.json")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE session SET parent_id = 'ses_parent'")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    job = {"harness": "opencode", "session_id": "ses_dcbf5fb4fffe1QmqHUqZJLMb31", "home": str(home.root)}
    assert run_job(job) == "subagent"
    assert local.ok("recall", entity="people/me")["facts"] == []
