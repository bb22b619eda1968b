"""Automatic capture, end to end: a real harness session states a decision (and leaks secrets and a
`<private>` span); when it ends, the installed hooks start a detached worker that captures its
transcript; the next session's first model request carries the decision, and no byte of the
secrets or the private text is anywhere in the memverbs home — the SQLite file, its WAL and
shared memory, the logs, the hooks' state.

What the real binaries do (HARNESSES.md, docs/hooks.md "Capture"): `claude -p` and `codex exec`
fire `Stop` and then `SessionEnd`, each with `transcript_path`; `grok -p` fires `Stop`, `SessionEnd` and
another `Stop`, with `transcript_path` naming its `updates.jsonl`; `opencode run`'s plugin sees
`session.idle` at the turn's end and names only the session, which the worker reads from opencode.db.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_model import Text, ToolCall
from harness_e2e import describe
from harnesses import require_cli

DECISION = "We decided to use Postgres for the job queue."
AWS_KEY = "AKIAZ7Q4NPLW3XEXAMPL"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
DB_PASSWORD = "s3cr3t-horse-battery"
PRIVATE = "the door code is 90210-alpha"
API_KEY_VAR = "MEMVERBS_E2E_FAKE_KEY"
SECRETS = (AWS_KEY, STRIPE, DB_PASSWORD, PRIVATE, "90210-alpha")
PROMPT = (
    f"{DECISION} Our deploy key is {AWS_KEY} and export STRIPE_SECRET_KEY={STRIPE} for billing. "
    f"The database is postgres://app:{DB_PASSWORD}@db.internal:5432/jobs. <private>{PRIVATE}</private> "
    "Please wire the queue."
)


def git_project(world) -> None:
    """The session's project: a git repository whose origin names it `widget` (projects/widget)."""
    subprocess.run(["git", "init", "-q", str(world.project)], check=True)
    subprocess.run(["git", "-C", str(world.project), "remote", "add", "origin", "git@github.com:acme/widget.git"], check=True)


def home_bytes(world) -> dict[str, bytes]:
    """Every file under the memverbs home, by path: brain.db, brain.db-wal, brain.db-shm, logs, state."""
    root = Path(world.env["MEMVERBS_HOME"])
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def assert_no_trace(world) -> None:
    files = home_bytes(world)
    assert "brain.db" in files
    leaks = [(name, s) for name, data in files.items() for s in SECRETS if s.encode() in data]
    assert not leaks, leaks


@pytest.fixture
def claude(world, fake_api):
    cli = require_cli("claude")
    git_project(world)
    world.memverbs("install", "claude")
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake"}

    def session(prompt: str) -> dict:
        proc = world.harness([cli, "-p", prompt, "--allowedTools", "mcp__memverbs", "--output-format", "json"], env)
        return json.loads(proc.stdout)

    return session


def test_claude_a_decision_reaches_the_next_session_and_no_secret_is_stored(world, fake_api, claude):
    fake_api.script(Text("Queue wiring noted."))
    sid = claude(PROMPT)["session_id"]

    lines = world.wait_for_capture(sid)
    assert [e["code"] for e in lines if e["code"] == "ok"] == ["ok"], lines  # Stop and SessionEnd: captured once
    assert {e["event"] for e in lines} <= {"Stop", "SessionEnd"}, lines
    hooks = [e for e in world.hook_log() if e["moment"] == "capture"]
    assert hooks and all(e["code"] == "spawned" and e["ms"] < 1000 for e in hooks), hooks

    facts = json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"]
    assert [f["fact"] for f in facts] == [DECISION], facts
    assert facts[0]["provenance"] == f"capture:claude session {sid}"
    page = json.loads(world.memverbs("get-page", f"sessions/{lines[0]['ts'][:10]}-claude-{sid.replace('-', '')[:8]}", "--json"))
    assert page["visibility"] == "private" and "[[projects/widget]]" in page["body"], page
    assert "[redacted:" in page["body"], page["body"]
    assert_no_trace(world)

    mark = fake_api.mark()
    claude("What do we use for the job queue?")
    first = fake_api.since(mark)[0]
    carried = [i for i, (role, text) in enumerate(first.messages()) if role == "system" and DECISION in text]
    assert carried, describe([first], limit=2000)
    world.wait_for_capture(sid)  # the second session's own workers, before the home is read again
    assert_no_trace(world)


def test_capture_off_for_the_project_stores_nothing(world, fake_api, claude):
    world.memverbs("config", "set", "capture.exclude_projects", "widget")
    fake_api.script(Text("ok"))
    sid = claude(PROMPT)["session_id"]

    lines = world.wait_for_capture(sid)
    assert {e["code"] for e in lines} <= {"excluded_project", "unchanged"}, lines
    assert json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"] == []


@pytest.fixture
def codex(world, fake_api):
    cli = require_cli("codex")
    git_project(world)
    (Path(world.env["CODEX_HOME"]) / "config.toml").write_text(  # the user's model provider: the fake
        f'model = "gpt-e2e"\nmodel_provider = "e2e"\n\n[model_providers.e2e]\nname = "e2e fake"\n'
        f'base_url = "{fake_api.url}/v1"\nenv_key = "{API_KEY_VAR}"\nwire_api = "responses"\n')
    world.memverbs("install", "codex")

    def session(prompt: str) -> str:
        argv = [cli, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
                "--disable", "plugins", "-c", "analytics.enabled=false", prompt]
        proc = world.harness(argv, {API_KEY_VAR: "sk-e2e-fake"})
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        return next(e["thread_id"] for e in events if e.get("type") == "thread.started")

    return session


def test_codex_a_decision_reaches_the_next_session_and_no_secret_is_stored(world, fake_api, codex):
    fake_api.script(Text("Queue wiring noted."))
    sid = codex(PROMPT)

    lines = world.wait_for_capture(sid)
    assert [e["code"] for e in lines if e["code"] == "ok"] == ["ok"], (lines, world.hook_log())
    facts = json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"]
    assert [f["fact"] for f in facts] == [DECISION], facts
    assert_no_trace(world)

    mark = fake_api.mark()
    codex("What do we use for the job queue?")
    first = fake_api.since(mark)[0]
    assert [i for i, (role, text) in enumerate(first.messages()) if role == "developer" and DECISION in text], \
        describe([first], limit=2000)
    world.wait_for_capture(sid)
    assert_no_trace(world)


@pytest.fixture
def grok(world, fake_api):
    cli = require_cli("grok")
    git_project(world)
    world.memverbs("install", "grok")
    with (Path(world.home) / ".grok" / "config.toml").open("a") as fh:  # the user's model: the fake, after our block
        fh.write(f'\n[model.fake]\nmodel = "fake-model"\nbase_url = "{fake_api.url}/v1"\napi_key = "x"\n'
                 'api_backend = "chat_completions"\ncontext_window = 128000\n')

    def session(prompt: str) -> str:
        before = set((Path(world.home) / ".grok" / "sessions").glob("*/*/updates.jsonl"))
        world.harness([cli, "-p", prompt, "-m", "fake", "--always-approve"], {})
        (new,) = set((Path(world.home) / ".grok" / "sessions").glob("*/*/updates.jsonl")) - before
        return new.parent.name

    return session


def test_grok_a_decision_reaches_the_next_session_and_no_secret_is_stored(world, fake_api, grok):
    """Grok fires SessionEnd and Stop with its updates.jsonl; the next session's pack rides on its
    first tool result (Grok drops what a SessionStart hook prints)."""
    shell = fake_api.offers("run_terminal_command")
    fake_api.script(Text("Queue wiring noted.", when=shell))
    sid = grok(PROMPT)

    lines = world.wait_for_capture(sid)
    assert [e["code"] for e in lines if e["code"] == "ok"] == ["ok"], (lines, world.hook_log())
    assert {e["harness"] for e in lines} == {"grok"}, lines
    facts = json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"]
    assert [f["fact"] for f in facts] == [DECISION], facts
    assert facts[0]["provenance"] == f"capture:grok session {sid}"
    assert_no_trace(world)

    mark = fake_api.mark()
    fake_api.script(ToolCall("run_terminal_command", {"command": "true", "description": "look"}, when=shell),
                    Text("Postgres.", when=shell))
    grok("What do we use for the job queue?")
    after_tool = [r for r in fake_api.since(mark) if shell(r.path, r.body)][-1]
    assert any(DECISION in text for _, text in after_tool.messages()), describe([after_tool], limit=3000)
    world.wait_for_capture(sid)
    assert_no_trace(world)


def opencode_sessions(world, fake_api, *, install: bool):
    cli = require_cli("opencode")
    git_project(world)
    config_dir = Path(world.env["XDG_CONFIG_HOME"]) / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    if install:
        world.memverbs("install", "opencode")
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": f"{fake_api.url}/v1", "apiKey": "x"},
                "models": {"fake-model": {"name": "Fake", "limit": {"context": 100000, "output": 4096}}}}
    (config_dir / "opencode.json").write_text(json.dumps({"model": "fake/fake-model", "small_model": "fake/fake-model",
                                                          "provider": {"fake": provider}}))

    def session(prompt: str) -> str:
        # opencode takes the session's directory from $PWD, not from its working directory.
        proc = world.harness([cli, "run", "--format", "json", prompt], {"PWD": str(world.project)}, timeout=150)
        return next(json.loads(line)["sessionID"] for line in proc.stdout.splitlines() if line.startswith("{"))

    return session


@pytest.fixture
def opencode(world, fake_api):
    return opencode_sessions(world, fake_api, install=True)


@pytest.mark.slow
def test_opencode_a_decision_reaches_the_next_session_and_no_secret_is_stored(world, fake_api, opencode):
    """opencode announces no session end: its plugin captures at session.idle (each turn's end) by
    session id, and the worker reads the session from opencode.db."""
    tools = lambda path, body: bool(body.get("tools"))  # noqa: E731 - not the title request
    fake_api.script(Text("Queue wiring noted.", when=tools))
    sid = opencode(PROMPT)

    lines = world.wait_for_capture(sid)
    assert [(e["event"], e["code"]) for e in lines] == [("session.idle", "ok")], (lines, world.hook_log())
    facts = json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"]
    assert [f["fact"] for f in facts] == [DECISION], facts
    assert facts[0]["provenance"] == f"capture:opencode session {sid}"
    assert_no_trace(world)

    mark = fake_api.mark()
    fake_api.script(Text("Postgres.", when=tools))
    opencode("What do we use for the job queue?")
    first = next(r for r in fake_api.since(mark) if tools(r.path, r.body))
    assert any(role == "system" and DECISION in text for role, text in first.messages()), describe([first], limit=2000)
    world.wait_for_capture(sid)
    assert_no_trace(world)


# -- backfill: sessions that ran without memverbs, read from the harness's own SQLite store -------


def backfill(world, harness: str) -> list[dict]:
    return json.loads(world.memverbs("capture", "--harness", harness, "--json"))["sessions"]


@pytest.mark.slow
def test_opencode_sessions_run_without_memverbs_are_backfilled_from_opencode_db(world, fake_api):
    """`memverbs capture` with no path reads the opencode.db the real opencode wrote, once."""
    session = opencode_sessions(world, fake_api, install=False)
    fake_api.script(Text("Queue wiring noted.", when=lambda path, body: bool(body.get("tools"))))
    sid = session(PROMPT)
    assert world.capture_log() == []  # nothing installed: nothing captured yet

    [first] = backfill(world, "opencode")
    assert (first["session_id"], first["status"], first["fact_statuses"]) == (sid, "captured", {"inserted": 1}), first
    facts = json.loads(world.memverbs("recall", "--entity", "projects/widget", "--json"))["facts"]
    assert [(f["fact"], f["provenance"]) for f in facts] == [(DECISION, f"capture:opencode session {sid}")]
    assert [s["status"] for s in backfill(world, "opencode")] == ["unchanged"]
    assert_no_trace(world)


@pytest.mark.slow
def test_openclaw_sessions_run_without_memverbs_are_backfilled_from_its_agent_store(world, fake_api):
    """The same from the SQLite store the real `openclaw agent --local` wrote (no plugin installed)."""
    from openclaw_support import fake_model_config, require_openclaw

    cli = require_openclaw(world.env)
    config = Path(world.env["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(fake_model_config(fake_api.url), indent=2))
    fake_api.script(Text("Queue wiring noted."))
    world.harness([cli, "agent", "--local", "--session-id", "backfill-1", "-m", PROMPT, "--json"], {}, timeout=150)

    # --since judges a session by its last event's `created_at` (epoch ms)
    recent = json.loads(world.memverbs("capture", "--harness", "openclaw", "--since", "1h", "--dry-run", "--json"))["sessions"]
    assert [(s["session_id"], s["status"]) for s in recent] == [("backfill-1", "would_capture")], recent
    sessions = backfill(world, "openclaw")
    assert [(s["session_id"], s["status"]) for s in sessions] == [("backfill-1", "captured")], sessions
    facts = json.loads(world.memverbs("recall", "--entity", sessions[0]["entity"], "--json"))["facts"]
    assert [(f["fact"], f["provenance"]) for f in facts] == [(DECISION, "capture:openclaw session backfill-1")], sessions
    assert [s["status"] for s in backfill(world, "openclaw")] == ["unchanged"]
    assert_no_trace(world)
