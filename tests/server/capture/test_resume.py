"""A capture takes up where it stopped: a checkpoint as it reads and at the end, a stopped capture (the
worker's CPU, wall-clock or memory limit) logged and resumed, a grown transcript read only past what
was read, and a transcript changed underneath read from the start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memverbs.server.capture import engine, resume
from memverbs.server.capture.plan import CaptureOptions
from memverbs.server.capture.state import SessionState
from memverbs.server.capture.worker import LimitReached, run_job


def turn(n: int, text: str) -> str:
    return json.dumps({"type": "user", "sessionId": "r-1", "cwd": "/nowhere", "timestamp": "2026-11-30T09:00:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


def padding(n: int) -> str:
    return turn(n, f"Now look at module {n}; keep the public API unchanged. " + "filler words here " * 40)


def transcript(path: Path, first: int, last: int, statements: dict[int, str]) -> Path:
    with path.open("a") as fh:
        for n in range(first, last):
            fh.write(turn(n, statements[n]) if n in statements else padding(n))
    return path


def capture_log(home) -> list[dict]:
    return [json.loads(line) for line in (home.logs / "capture.jsonl").read_text().splitlines()]


def test_a_capture_stopped_part_way_resumes_from_its_checkpoint(home, local, tmp_path, monkeypatch):
    path = transcript(tmp_path / "s.jsonl", 0, 400, {5: "We decided to ship on Tuesdays.", 390: "Remember that the cache is redis-7."})
    monkeypatch.setattr(engine, "CHECKPOINT_EVERY", 50_000)
    saved = resume.save
    calls = []

    def stop_after_two(state, transcript, session):
        saved(state, transcript, session)
        calls.append(transcript.resume_at)
        if len(calls) == 2:
            raise LimitReached("cpu_limit")  # what the worker's SIGXCPU handler raises

    monkeypatch.setattr(resume, "save", stop_after_two)
    job = {"harness": "claude", "session_id": "r-1", "transcript_path": str(path), "home": str(home.root)}
    assert run_job(job) == "stopped_cpu_limit"
    line = capture_log(home)[-1]
    assert line["counts"]["resume_at"] == calls[1] > 0
    assert local.ok("recall", entity="people/me")["facts"] == []  # nothing half-captured was written

    monkeypatch.setattr(resume, "save", saved)
    reopened, session = resume.open_resumed(SessionState(str(home.root), "claude", "r-1"), str(path), "claude", "r-1", None, 30, False)
    assert reopened.start == calls[1] and session is not None and [f.text for f in session.facts.values()] == ["We decided to ship on Tuesdays."]
    assert run_job(job) == "ok"
    assert sorted(f["fact"] for f in local.ok("recall", entity="people/me")["facts"]) == [
        "The cache is redis-7.", "We decided to ship on Tuesdays."]


def test_a_grown_transcript_is_read_only_past_what_was_read(home, local, tmp_path):
    path = transcript(tmp_path / "s.jsonl", 0, 20, {3: "We decided to ship on Tuesdays."})
    job = {"harness": "claude", "session_id": "r-1", "transcript_path": str(path), "home": str(home.root)}
    assert run_job(job) == "ok"
    state = SessionState(str(home.root), "claude", "r-1")
    end = path.stat().st_size
    transcript(path, 20, 25, {22: "Remember that the cache is redis-7."})
    reopened, session = resume.open_resumed(state, str(path), "claude", "r-1", None, 30, False)
    assert reopened.start == end and session is not None
    assert run_job(job) == "ok"
    assert sorted(f["fact"] for f in local.ok("recall", entity="people/me")["facts"]) == [
        "The cache is redis-7.", "We decided to ship on Tuesdays."]
    page = local.ok("get_page", slug="sessions/2026-11-30-claude-r1")["body"]
    assert "Now look at module 0" in page  # the page is the whole session's, not the last part's


def test_a_transcript_changed_underneath_is_read_from_the_start(home, tmp_path):
    path = transcript(tmp_path / "s.jsonl", 0, 10, {})
    run_job({"harness": "claude", "session_id": "r-1", "transcript_path": str(path), "home": str(home.root)})
    state = SessionState(str(home.root), "claude", "r-1")
    text = path.read_text()
    path.write_text(text.replace("module 9", "module X"))  # same size, other bytes before the checkpoint
    assert resume.open_resumed(state, str(path), "claude", "r-1", None, 30, False)[1] is None
    path.write_text("\n" + text)  # the same lines, shifted
    assert resume.open_resumed(state, str(path), "claude", "r-1", None, 30, False)[1] is None


@pytest.mark.sqlite_only
def test_the_worker_under_a_cpu_limit_logs_its_stop_and_the_next_capture_finishes(home, local, tmp_path):
    """The real limit: the worker process with a 3 s CPU budget on a long transcript. SIGXCPU becomes a
    logged `stopped_cpu_limit` (not a silent death), and the next, unlimited, capture resumes and ends."""
    path = transcript(tmp_path / "s.jsonl", 0, 60_000, {1: "We decided to ship on Tuesdays.", 59_990: "Remember that the cache is redis-7."})
    job = {"harness": "claude", "session_id": "r-1", "transcript_path": str(path), "home": str(home.root)}
    code = ("import json, resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_CPU, (3, 8))\n"
            "from memverbs.server.capture.worker import run_job\n"
            "print(run_job(json.loads(sys.argv[1]), limited=True))\n")
    env = {**os.environ, "MEMVERBS_HOME": str(home.root)}
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(job)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.strip() == "stopped_cpu_limit", proc.stderr[-2000:]
    stopped = capture_log(home)[-1]
    assert stopped["code"] == "stopped_cpu_limit" and stopped["counts"]["resume_at"] > 0
    assert run_job(job) == "ok"
    assert sorted(f["fact"] for f in local.ok("recall", entity="people/me")["facts"]) == [
        "The cache is redis-7.", "We decided to ship on Tuesdays."]


def test_the_checkpoint_on_disk_holds_no_secret_and_no_private_text(home, tmp_path):
    path = transcript(tmp_path / "s.jsonl", 0, 5, {1: "Remember that DB_PASS=plaintext-rosebud-42. <private>alarm code 7391</private>",
                                                   2: "We decided to ship on Tuesdays."})
    assert run_job({"harness": "claude", "session_id": "r-1", "transcript_path": str(path), "home": str(home.root)}) == "ok"
    saved = Path(resume.checkpoint_path(SessionState(str(home.root), "claude", "r-1")))
    assert oct(saved.stat().st_mode & 0o777) == "0o600"
    text = saved.read_text()
    assert "Tuesdays" in text and "plaintext-rosebud-42" not in text and "7391" not in text


def test_options_keep_their_meaning_on_a_resumed_session(tmp_path):
    """A resumed session still caps its facts by the options of the capture that plans it."""
    path = transcript(tmp_path / "s.jsonl", 0, 30, {n: f"We decided to ship module {n} on Tuesdays." for n in range(0, 30, 3)})
    from memverbs.server.capture.reading import open_transcript

    plan = engine.plan_capture(open_transcript(path, "claude"), CaptureOptions(max_facts=4))
    assert len(plan.facts) == 4 and plan.dropped == 6
