"""OpenClaw through its Gateway, end to end: the pack after a compaction.

OpenClaw compacts a stored session only through a running Gateway: `openclaw sessions compact
KEY` (the `sessions.compact` RPC; without `--max-lines` the Gateway asks the model for a
summary). The CLI refuses `/compact` in `--message`, and `agent --local` cannot compact. So this
module runs one Gateway on a loopback port in the throwaway HOME (`gateway run --bind loopback
--auth token`), takes turns with `agent --session-key` through it, and compacts between them.

What the real binary does (HARNESSES.md §8): after a successful compaction the Gateway emits
`after_compaction`; our plugin runs `memverbs hook post-compact` and the next turn's
`before_prompt_build` prepends that fresh pack, with no heartbeat on top.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fake_model import Text
from harness_e2e import CAPTURE_TIMEOUT_S, PACK_HEADER, World, describe
from harnesses import memverbs, run
from openclaw_support import fake_model_config, require_openclaw

CAT = "Alice adopted a cat"
SESSION_KEY = "agent:main:memverbs-compaction"
TOKEN = "memverbs-e2e-gateway-token"
READY_TIMEOUT_S = 240  # a cold Gateway takes 10-60 s to be ready on a loaded 2-core machine
TURN_TIMEOUT_S = 180  # the first turn through a fresh Gateway prepares its catalogs (20-40 s here)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def is_summary_request(_path: str, body: dict) -> bool:
    """The Gateway's compaction asks the model for a summary under its own system prompt."""
    return "context summarization assistant" in json.dumps(body)


@dataclass
class Gateway:
    """`openclaw gateway run` in its own process group, its console read by a thread."""

    proc: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def follow(self) -> None:
        for raw in self.proc.stdout:
            line = ANSI.sub("", raw.rstrip())
            self.lines.append(line)
            if line.endswith("[gateway] ready"):
                self.ready.set()
        self.ready.set()  # exited: wake the waiter, which sees the exit code

    def wait_ready(self) -> None:
        if not self.ready.wait(READY_TIMEOUT_S) or self.proc.poll() is not None:
            raise AssertionError(f"the OpenClaw Gateway was not ready within {READY_TIMEOUT_S}s "
                                 f"(exit {self.proc.poll()}):\n" + "\n".join(self.lines[-40:]))

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)  # it drains sessions (a 2 s session_end budget) and exits
        except (ProcessLookupError, PermissionError):
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything it spawned and left behind
        except (ProcessLookupError, PermissionError):
            pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gateway(world: World, fake_api) -> Iterator[tuple[str, dict, Gateway]]:
    """memverbs installed into a fresh OpenClaw config, and its Gateway running: the CLI, the env its clients
    need, and the Gateway (stopped at teardown if the test has not stopped it)."""
    cli = require_openclaw(world.env)
    port = free_port()
    config = world.home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    # Complete before `memverbs install`: at start the Gateway puts back openclaw.json.bak (which the
    # install's ledger step leaves equal to what memverbs wrote) over a file lacking OpenClaw's `meta`,
    # so an edit made after the install would be lost.
    config.write_text(json.dumps({
        **fake_model_config(fake_api.url),
        "plugins": {"allow": ["memverbs"]},  # no bundled channel or provider plugins: a faster start
        "logging": {"file": str(world.home / "openclaw.log")},  # not the shared /tmp/openclaw
        "gateway": {"mode": "local", "port": port, "bind": "loopback", "auth": {"mode": "token", "token": TOKEN}},
    }, indent=2))
    world.memverbs("install", "openclaw")

    env = {**world.env, "OPENCLAW_GATEWAY_TOKEN": TOKEN}
    proc = subprocess.Popen([cli, "gateway", "run", "--bind", "loopback", "--port", str(port), "--auth", "token"],
                            env=env, cwd=world.project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    gw = Gateway(proc)
    threading.Thread(target=gw.follow, daemon=True).start()
    try:
        gw.wait_ready()
        yield cli, {"OPENCLAW_GATEWAY_TOKEN": TOKEN}, gw
    finally:
        gw.stop()


@pytest.mark.slow
def test_after_compaction_the_next_request_carries_a_fresh_pack(world, fake_api, gateway):
    cli, client_env, _ = gateway
    fake_api.script(Text("Hello."), Text("They said hello.", when=is_summary_request), Text("A cat."))

    def turn(prompt: str) -> None:
        world.harness([cli, "agent", "--session-key", SESSION_KEY, "-m", prompt, "--json"], client_env, timeout=TURN_TIMEOUT_S)

    turn("hello")
    world.remember(CAT)  # after the session's pack was built: only a refreshed pack can lead with it
    compacted = world.harness([cli, "sessions", "compact", SESSION_KEY, "--json"], client_env, timeout=TURN_TIMEOUT_S)
    assert json.loads(compacted.stdout)["compacted"] is True, compacted.stdout
    mark = fake_api.mark()
    turn("what is new?")

    moments = [(e["moment"], e["code"]) for e in world.hook_log() if e["harness"] == "openclaw"]
    assert ("post-compact", "ok") in moments, moments
    # The Gateway's own heartbeat turn may reach the model first: the turn's request is the one carrying the prompt.
    later = fake_api.since(mark)
    nxt = next((r for r in later if any(role == "user" and "what is new?" in text for role, text in r.messages())), later[0])
    users = [text for role, text in nxt.messages() if role == "user" and "what is new?" in text]
    assert users, describe([nxt], limit=1500)
    expected = run([memverbs(), "hook", "post-compact", "--harness", "openclaw"], world.env, cwd=world.project,
                   input=json.dumps({"session_id": "e2e-expected-after-compaction"})).stdout.strip()
    assert expected.startswith(PACK_HEADER) and CAT in expected, expected
    # The fresh pack leads the prompt (prependContext); a stale pack plus a heartbeat would put CAT after it.
    assert expected in users[-1] and users[-1].index(expected) < users[-1].index("what is new?"), describe([nxt], limit=1500)

    # before_compaction handed the session to capture: the worker read it from OpenClaw's store (the
    # session page only: "hello" states nothing; a stated fact would join this pack's recent facts).
    assert ("capture", "spawned") in moments, moments
    deadline = time.monotonic() + CAPTURE_TIMEOUT_S
    while not [e for e in world.capture_log() if e["event"] == "PreCompact"] and time.monotonic() < deadline:
        time.sleep(0.2)
    captured = [(e["harness"], e["code"], e["counts"].get("page")) for e in world.capture_log() if e["event"] == "PreCompact"]
    assert captured[:1] == [("openclaw", "ok", "created")], world.capture_log()


@pytest.mark.slow
def test_a_gateway_shutdown_ends_its_sessions_and_they_are_captured(world, fake_api, gateway):
    """The Gateway's shutdown drain (SIGTERM) fires `session_end` for the sessions it ran, within a 2 s
    budget shared by every handler: our plugin's hook returns at once, and its worker captures the
    session from OpenClaw's store after the Gateway is gone."""
    cli, client_env, gw = gateway
    fake_api.script(Text("Noted."))
    decision = "We decided to use tabs in this repo."
    world.harness([cli, "agent", "--session-key", "agent:main:memverbs-end", "-m", decision, "--json"], client_env,
                  timeout=TURN_TIMEOUT_S)
    gw.stop()

    ends = [e for e in world.hook_log() if e["harness"] == "openclaw" and e["moment"] == "capture"]
    assert [e["code"] for e in ends] == ["spawned"], (ends, gw.lines[-30:])
    deadline = time.monotonic() + CAPTURE_TIMEOUT_S
    while not [e for e in world.capture_log() if e["event"] == "SessionEnd"] and time.monotonic() < deadline:
        time.sleep(0.2)
    captured = [(e["harness"], e["code"]) for e in world.capture_log() if e["event"] == "SessionEnd"]
    assert captured == [("openclaw", "ok")], world.capture_log()
    # OpenClaw 2026.9 names a `sessionFile` only when a file exists; its sessions live in SQLite, so the
    # worker read the session's rows from the agent's store.
    sessions = Path(world.env["MEMVERBS_HOME"]) / "capture" / "sessions"
    [state] = [p for p in sessions.glob("openclaw-*.json") if not p.name.endswith(".resume.json")]  # not its checkpoint
    assert json.loads(state.read_text())["path"].endswith("/agent/openclaw-agent.sqlite"), state.read_text()
    facts = json.loads(world.memverbs("capture", "--harness", "openclaw", "--dry-run", "--json"))["sessions"]
    assert [f["fact"] for s in facts for f in s["facts"]] == [decision], facts
