"""Each harness's transcript, read from a file the real binary wrote (benchmarks/capture_record.py),
into one shape: the user's words, the assistant's, and each tool run's command or file and outcome."""

from __future__ import annotations

from pathlib import Path

from openclaw_support import opencode_store, transcript_store

from memverbs.server.capture.reading import read_transcript, sniff
from memverbs.server.capture.stores import find_session, sessions
from memverbs.server.capture.transcript import Said, ToolRun

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "capture"


def _runs(t) -> list[tuple]:
    return [(r.name, r.command, r.paths, r.ok) for r in t.events if isinstance(r, ToolRun)]


def test_grok_updates_stream_is_read_into_the_common_shape():
    path = DATA / "grok-fix.jsonl"
    assert sniff(str(path)) == "grok"
    t = read_transcript(path)
    assert (t.harness, t.session_id, t.cwd) == ("grok", "01a233fb-9b32-7580-b8dd-8289aad5a395", "/bench/project")
    assert t.started and t.started.startswith("20")
    [user] = t.said("user")
    assert user.startswith("The tests in test_calc.py fail.") and "<private>" in user  # dropped later, by the privacy gate
    assert t.said("assistant") == ["Fixed add() and committed; the tests pass. Probably subtract() needs the same fix."]
    pytest_cmd = "python -m pytest -q test_calc.py"
    assert _runs(t) == [
        ("run_terminal_command", pytest_cmd, [], False),  # exit 1: Grok still says "completed"
        ("search_replace", None, ["/bench/project/calc.py"], True),
        ("run_terminal_command", pytest_cmd, [], True),
        ("run_terminal_command", "git add -A && git commit -m 'Fix add() to add'", [], True),
    ]
    assert "Fix add() to add" in t.runs()[-1].output
    assert [type(e) for e in t.events][:2] == [Said, ToolRun]


def test_grok_streamed_chunks_join_into_one_message_and_the_store_is_found(tmp_path):
    cwd = "%2Fhome%2Fme%2Fapp"
    folder = tmp_path / ".grok" / "sessions" / cwd / "s-9"
    folder.mkdir(parents=True)
    chunk = '{{"timestamp":1,"method":"session/update","params":{{"sessionId":"s-9","update":{{"sessionUpdate":"{}","content":{{"type":"text","text":"{}"}}}}}}}}\n'
    (folder / "updates.jsonl").write_text(
        chunk.format("user_message_chunk", "<user_query>We decided to ") + chunk.format("user_message_chunk", "use tabs.</user_query>")
        + chunk.format("agent_message_chunk", "Noted") + chunk.format("agent_message_chunk", ", tabs.") + "not json\n")
    t = read_transcript(folder / "updates.jsonl", "grok")
    assert (t.session_id, t.cwd) == ("s-9", "/home/me/app")
    assert t.said("user") == ["We decided to use tabs."] and t.said("assistant") == ["Noted, tabs."]
    env = {"HOME": str(tmp_path)}
    assert find_session("grok", "s-9", env) == folder / "updates.jsonl"
    assert find_session("grok", "s-*", env) is None  # a session id is never a pattern
    assert list(sessions("grok", env=env)) == [(folder / "updates.jsonl", None)]


def _openclaw_shape(t) -> None:
    assert t.harness == "openclaw" and t.session_id == "rec-1"
    assert t.cwd == "/bench/home/.openclaw/workspace"  # the agent's workspace, not where `openclaw` ran
    assert t.said("user") == ["We decided to use tabs. <private>pin 4411</private> Run echo."]
    assert t.said("assistant") == ["Done; that failed."]
    assert _runs(t) == [("exec", "echo hi && false", [], False)]  # exitCode 1, though isError is false


def test_openclaw_session_file_is_read_into_the_common_shape():
    path = DATA / "openclaw-decision.jsonl"
    assert sniff(str(path)) == "openclaw"
    _openclaw_shape(read_transcript(path))


def test_openclaw_sqlite_store_is_read_by_session_id_and_found_by_it(tmp_path):
    db = transcript_store(tmp_path / "state", DATA / "openclaw-decision.jsonl")
    assert sniff(str(db)) == "openclaw"
    _openclaw_shape(read_transcript(db, "openclaw", session_id="rec-1"))
    assert read_transcript(db, "openclaw", session_id="nobody").events == []
    env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    assert find_session("openclaw", "rec-1", env) == db
    assert find_session("openclaw", "nobody", env) is None
    profile = {"HOME": str(tmp_path), "OPENCLAW_PROFILE": "work"}
    (tmp_path / ".openclaw-work").mkdir()
    (tmp_path / "state").rename(tmp_path / ".openclaw-work" / "x")
    (tmp_path / ".openclaw-work" / "x" / "agents").rename(tmp_path / ".openclaw-work" / "agents")
    assert find_session("openclaw", "rec-1", profile) == tmp_path / ".openclaw-work" / "agents" / "main" / "agent" / db.name


def test_opencode_store_is_read_by_session_id_and_found_by_it(tmp_path):
    db = opencode_store(tmp_path / "data", DATA / "opencode-store.json")
    assert sniff(str(db)) == "opencode"
    sid = "ses_dcbf5fb4fffe1QmqHUqZJLMb31"
    t = read_transcript(db, "opencode", session_id=sid)
    assert (t.harness, t.session_id, t.cwd) == ("opencode", sid, "/bench/project")
    assert t.started and t.started.startswith("20")
    # `opencode run "…"` stores the prompt in quotes; they are not the user's.
    assert t.said("user") == ["We decided to use tabs. <private>pin 4411</private> Run echo."]
    assert t.said("assistant") == ["Done; that failed."]
    assert _runs(t) == [("bash", "echo hi && false", [], False)]  # status completed, metadata.exit 1
    assert read_transcript(db, "opencode", session_id="ses_nobody").events == []
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    assert find_session("opencode", sid, env) == db
    assert find_session("opencode", "ses_nobody", env) is None
    assert find_session("opencode", sid, {"HOME": str(tmp_path)}) is None  # ~/.local/share/opencode: none here


def test_the_session_page_names_each_harness_with_its_article():
    from memverbs.server.capture.engine import plan_capture
    from memverbs.server.capture.plan import CaptureOptions

    def opening(name: str) -> str:
        body = plan_capture(read_transcript(DATA / name), CaptureOptions()).page_body
        return body.split(" session", 1)[0]

    assert [opening(n) for n in ("openclaw-decision.jsonl", "grok-fix.jsonl")] == ["An OpenClaw", "A Grok Build"]
