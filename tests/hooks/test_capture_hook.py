"""`memverbs hook capture`, through the exact command the installers write: it hands the transcript
to a detached worker, prints nothing, exits 0, and the worker captures the session and is gone."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import ROOMY_DEADLINE, installed_hook_command

from memverbs.hooks.events import Harness
from memverbs.installers.base import Options

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "capture"


def hook_log(home) -> list[dict]:
    path = home.logs / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def capture_log(home) -> list[dict]:
    path = home.logs / "capture.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def marked(mark: str) -> list[int]:
    """Live processes whose environment carries this test's mark."""
    found = []
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and f"CAPTURE_TEST_MARK={mark}".encode() in environ.split(b"\0"):
            found.append(pid)
    return found


@pytest.fixture
def hook(env, tmp_path):
    mark = uuid.uuid4().hex
    transcript = tmp_path / "session.jsonl"
    transcript.write_text((DATA / "codex-decision.jsonl").read_text().replace("/bench/project", str(tmp_path / "elsewhere")))

    def run(event: str = "SessionEnd", session: str = "s-1", extra_env: dict | None = None, payload: object = None):
        body = payload if payload is not None else {"session_id": session, "transcript_path": str(transcript),
                                                     "hook_event_name": event, "cwd": str(tmp_path)}
        command = f"{installed_hook_command(Options(Harness.CODEX, env=env), 'capture')} {shlex.join(ROOMY_DEADLINE)}"
        return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(body), capture_output=True, text=True,
                              env={**env, "CAPTURE_TEST_MARK": mark, **(extra_env or {})}, timeout=30)

    run.mark = mark
    return run


def wait_done(home, mark: str, lines: int = 1) -> list[dict]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if len(capture_log(home)) >= lines and not marked(mark):
            return capture_log(home)
        time.sleep(0.05)
    raise AssertionError(f"the worker did not finish: {capture_log(home)} {hook_log(home)} {marked(mark)}")


@pytest.mark.real_clock  # a rate limit or repeat window read from a file's mtime
def test_the_hook_returns_at_once_and_the_worker_captures_then_exits(hook, home, local):
    proc = hook()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert [e["code"] for e in hook_log(home)] == ["spawned"]
    [line] = wait_done(home, hook.mark)
    assert line["code"] == "ok" and line["counts"] == {"inserted": 2, "page": "created"}, line
    facts = local.ok("recall", entity="people/me")["facts"]
    assert sorted(f["fact"] for f in facts) == ["The user would rather keep the changelog in CHANGELOG.md than in the wiki.",
                                                "We've decided to ship releases on Tuesdays."]
    assert not marked(hook.mark)  # no process left behind

    hook("PreCompact")  # the same transcript again: nothing to do
    assert wait_done(home, hook.mark, 2)[-1]["code"] == "unchanged"
    hook("Stop")  # within minutes of the last capture: not even a worker
    assert hook_log(home)[-1]["code"] == "rate_limited" and len(capture_log(home)) == 2


def test_switches_stop_capture_before_any_worker(hook, home, runtime):
    assert hook(extra_env={"MEMVERBS_HOOKS": "off"}).returncode == 0
    assert hook_log(home) == []  # the kill switch: not even a log line
    assert hook(extra_env={"MEMVERBS_CAPTURE__ENABLED": "false"}).returncode == 0
    (home.root / "config.toml").write_text("[capture]\nenabled = false\n")
    assert hook(session="s-2").returncode == 0
    assert [e["code"] for e in hook_log(home)] == ["capture_off", "capture_off"]
    assert hook(payload=["not", "an", "object"]).returncode == 0 and hook_log(home)[-1]["code"] == "bad_input"
    time.sleep(0.5)
    assert capture_log(home) == [] and not marked(hook.mark)


def test_the_capture_hook_imports_neither_the_engine_nor_pydantic_nor_mcp(env, tmp_path):
    """Of the server, only where capture keeps its state (server/capture/paths.py, stdlib only)."""
    probe = ("import sys,time;from memverbs.hooks.capture import run_capture_hook;"
             "run_capture_hook(['capture','--harness','claude'],time.monotonic(),b'{\"session_id\":\"x\"}');"
             "bad=[m for m in sys.modules if m.startswith(('pydantic','mcp','detect_secrets','memverbs.server'))"
             " and m not in ('memverbs.server','memverbs.server.capture','memverbs.server.capture.paths')];"
             "print(bad)")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys;sys.path[:0]={sys.path!r};{probe}"],
                         env={**env, "MEMVERBS_HOME": str(tmp_path / "no-home")}, capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_grok_session_through_claude_codes_hook_is_captured_as_grok(env, home, local, tmp_path):
    """Grok runs the hooks in Claude Code's settings too: Claude's capture hook gets Grok's payload
    (camelCase twins beside the snake_case fields) and its updates.jsonl, and captures it as Grok's."""
    mark = uuid.uuid4().hex
    transcript = tmp_path / "updates.jsonl"
    transcript.write_text((DATA / "grok-fix.jsonl").read_text().replace("/bench/project", str(tmp_path / "elsewhere")))
    body = {"hookEventName": "session_end", "sessionId": "g-1", "workspaceRoot": str(tmp_path), "transcriptPath": str(transcript),
            "hook_event_name": "SessionEnd", "session_id": "g-1", "transcript_path": str(transcript), "reason": "shutdown"}
    command = f"{installed_hook_command(Options(Harness.CLAUDE, env=env), 'capture')} {shlex.join(ROOMY_DEADLINE)}"
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(body), capture_output=True, text=True,
                          env={**env, "CAPTURE_TEST_MARK": mark}, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [line] = wait_done(home, mark)
    assert (line["harness"], line["code"]) == ("grok", "ok"), line
    facts = local.ok("recall", entity="people/me")["facts"]
    assert "We decided to tag releases from main only." in [f["fact"] for f in facts]
    assert {f["provenance"] for f in facts} == {"capture:grok session 01a233fb-9b32-7580-b8dd-8289aad5a395"}, facts


def test_openclaws_session_end_without_a_file_is_captured_from_its_sqlite_store(env, home, local, tmp_path):
    """What the OpenClaw plugin sends at session_end: the session id and no sessionFile (OpenClaw 2026.9
    keeps sessions in SQLite); the worker finds the session in the store under OPENCLAW_STATE_DIR."""
    from openclaw_support import transcript_store

    transcript_store(tmp_path / "state", DATA / "openclaw-decision.jsonl")
    mark = uuid.uuid4().hex
    command = f"{installed_hook_command(Options(Harness.OPENCLAW, env=env), 'capture')} --session-id rec-1 {shlex.join(ROOMY_DEADLINE)}"
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps({"session_id": "rec-1", "hook_event_name": "SessionEnd"}),
                          capture_output=True, text=True, env={**env, "CAPTURE_TEST_MARK": mark, "OPENCLAW_STATE_DIR": str(tmp_path / "state")},
                          timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [line] = wait_done(home, mark)
    assert (line["harness"], line["code"], line["counts"]) == ("openclaw", "ok", {"inserted": 1, "page": "created"}), line
    facts = local.ok("recall", entity="people/me")["facts"]
    assert [(f["fact"], f["provenance"]) for f in facts] == [("We decided to use tabs.", "capture:openclaw session rec-1")]
    brain = b"".join(p.read_bytes() for p in home.root.glob("brain.db*"))
    assert brain and b"pin 4411" not in brain


@pytest.mark.real_clock  # a rate limit or repeat window read from a file's mtime
def test_opencodes_turn_end_is_captured_from_its_store_then_rate_limited(env, home, local, tmp_path):
    """What the opencode plugin sends at session.idle: the session id alone; the worker reads the
    session from opencode.db under XDG_DATA_HOME. session.idle ends every turn, as Stop does."""
    from openclaw_support import opencode_store

    opencode_store(tmp_path / "data", DATA / "opencode-store.json")
    mark = uuid.uuid4().hex
    sid = "ses_dcbf5fb4fffe1QmqHUqZJLMb31"
    command = f"{installed_hook_command(Options(Harness.OPENCODE, env=env), 'capture')} --session-id {sid} {shlex.join(ROOMY_DEADLINE)}"

    def idle():
        return subprocess.run(["/bin/sh", "-c", command], input=json.dumps({"session_id": sid, "hook_event_name": "session.idle"}),
                              capture_output=True, text=True, timeout=30,
                              env={**env, "CAPTURE_TEST_MARK": mark, "XDG_DATA_HOME": str(tmp_path / "data")})

    proc = idle()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [line] = wait_done(home, mark)
    assert (line["harness"], line["code"], line["counts"]) == ("opencode", "ok", {"inserted": 1, "page": "created"}), line
    facts = local.ok("recall", entity="people/me")["facts"]
    assert [(f["fact"], f["provenance"]) for f in facts] == [("We decided to use tabs.", f"capture:opencode session {sid}")]
    assert idle().returncode == 0 and hook_log(home)[-1]["code"] == "rate_limited"


def test_a_harness_that_kills_the_hooks_process_group_does_not_reach_the_worker(env, home, local, tmp_path):
    """The hook waits for no process: it returns while the worker is still starting, and the worker is
    already out of the hook's process group, so killing that group (as a harness may, after its hook
    exits) leaves the capture to finish."""
    import signal

    mark = uuid.uuid4().hex
    transcript = tmp_path / "session.jsonl"
    transcript.write_text((DATA / "codex-decision.jsonl").read_text().replace("/bench/project", str(tmp_path / "elsewhere")))
    command = f"{installed_hook_command(Options(Harness.CODEX, env=env), 'capture')} {shlex.join(ROOMY_DEADLINE)}"
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**env, "CAPTURE_TEST_MARK": mark}, start_new_session=True)
    out, err = proc.communicate(json.dumps({"session_id": "pg-1", "transcript_path": str(transcript), "hook_event_name": "SessionEnd"}).encode(),
                                timeout=30)
    assert (proc.returncode, out, err) == (0, b"", b"")
    workers = marked(mark)
    assert workers and all(os.getpgid(pid) != proc.pid for pid in workers), (workers, proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nothing left in the hook's group: the point
    [line] = wait_done(home, mark)
    assert line["code"] == "ok", line
