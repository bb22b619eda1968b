"""The per-prompt reflex, end to end: in every harness that can inject, a prompt that names an entity
carries a pointer to it in that same turn's model request, and a prompt that names nothing carries none.

Each test installs memverbs into the real harness (Claude Code, Codex, opencode, OpenClaw), adds a
page the session's pack does not show (a company with no facts, so no standing entity), and runs a
turn that names nothing, then a turn that names it. The fake model on loopback logs every request.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_model import Text
from harness_e2e import CODEX_KEY_VAR, codex_provider_config, describe
from harnesses import require_cli
from openclaw_support import installed_openclaw

from memverbs.server.verbs.delta import IN_FLIGHT_LAG_MS
from memverbs.server.verbs.render import NAMED_SECTION

SLUG = "companies/kelpforge"
PAGE = (
    "---\ntitle: Kelpforge\ntype: company\nsummary: Seed-stage marine robotics company; the round closes in March.\n---\n\n"
    "Kelpforge builds underwater drones.\n"
)
QUIET = "Good morning! Let me grab a coffee first, then we start."
NAMING = "What is the latest on Kelpforge?"


@pytest.fixture
def kelpforge(world):
    world.memverbs("put-page", SLUG, input=PAGE)
    # History before the session, not news in it: a page written within delta's in-flight lag of the
    # session's start is delivered by its first heartbeat (delta.IN_FLIGHT_LAG_MS).
    time.sleep(IN_FLIGHT_LAG_MS / 1000 + 0.2)
    return world


def turn_request(requests, prompt: str):
    """The model request of the turn whose user prompt is `prompt` (its first one: the rest are tool round trips)."""
    found = [r for r in requests if any(prompt in text for role, text in r.messages() if role == "user")]
    assert found, describe(requests, limit=800)
    # Not a side request of the harness's own (opencode's title request offers no tools and gets no memory).
    return next((r for r in found if isinstance(r.body, dict) and r.body.get("tools")), found[0])


def pointed(request) -> bool:
    return any(NAMED_SECTION in text and f"`{SLUG}`" in text for _, text in request.messages())


def assert_quiet_then_pointed(fake_api, run_turn) -> None:
    mark = fake_api.mark()
    run_turn(QUIET)
    quiet = turn_request(fake_api.since(mark), QUIET)
    assert not any(NAMED_SECTION in text for _, text in quiet.messages()), describe([quiet], limit=1500)
    mark = fake_api.mark()
    run_turn(NAMING)
    named = turn_request(fake_api.since(mark), NAMING)
    assert pointed(named), describe([named], limit=2000)
    assert "Seed-stage marine robotics company" in named.text


def test_claude_code_points_to_what_a_prompt_names_in_that_turns_request(kelpforge, fake_api):
    cli = require_cli("claude")
    kelpforge.memverbs("install", "claude")
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake"}
    chat = kelpforge.conversation([cli, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                                   "--verbose", "--allowedTools", "mcp__memverbs"], env)
    try:
        assert_quiet_then_pointed(fake_api, chat.say)
    finally:
        chat.close()
    beats = [e["code"] for e in kelpforge.hook_log() if e["moment"] == "heartbeat"]
    assert beats[-2:] == ["unchanged", "reflex"], kelpforge.hook_log()  # both answered on the fast path


def test_codex_points_to_what_a_prompt_names_in_that_turns_request(kelpforge, fake_api):
    cli = require_cli("codex")
    (Path(kelpforge.env["CODEX_HOME"]) / "config.toml").write_text(codex_provider_config(fake_api.url))
    kelpforge.memverbs("install", "codex")

    def run_turn(prompt: str) -> None:
        argv = [cli, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
                "--disable", "plugins", "-c", "analytics.enabled=false", prompt]
        proc = kelpforge.harness(argv, {CODEX_KEY_VAR: "sk-e2e-fake"})
        assert '"turn.completed"' in proc.stdout, proc.stdout + proc.stderr

    assert_quiet_then_pointed(fake_api, run_turn)


def test_opencode_points_to_what_a_prompt_names_in_that_turns_request(kelpforge, fake_api):
    cli = require_cli("opencode")
    config_dir = Path(kelpforge.env["XDG_CONFIG_HOME"]) / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    kelpforge.memverbs("install", "opencode")
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": f"{fake_api.url}/v1", "apiKey": "x"},
                "models": {"fake-model": {"name": "Fake", "limit": {"context": 100000, "output": 4096}}}}
    (config_dir / "opencode.json").write_text(json.dumps({"model": "fake/fake-model", "small_model": "fake/fake-model",
                                                          "provider": {"fake": provider}}))
    kelpforge.project.mkdir(parents=True, exist_ok=True)

    def run_turn(prompt: str) -> None:
        # opencode takes the session's directory from $PWD, not from its working directory.
        kelpforge.harness([cli, "run", "--format", "json", prompt], {"PWD": str(kelpforge.project)}, timeout=150)

    assert_quiet_then_pointed(fake_api, run_turn)


def test_openclaw_points_to_what_a_prompt_names_in_that_turns_request(kelpforge, fake_api, tmp_path):
    cli, bare = installed_openclaw(kelpforge, fake_api, tmp_path)
    fake_api.script(Text("Coffee first."), Text("Here is what I have."))

    def run_turn(prompt: str) -> None:
        bare.harness([cli, "agent", "--local", "--session-id", "memverbs-e2e-reflex", "-m", prompt, "--json"], {}, timeout=150)

    assert_quiet_then_pointed(fake_api, run_turn)
