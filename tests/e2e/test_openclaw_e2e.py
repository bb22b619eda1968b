"""OpenClaw, end to end: `memverbs install openclaw`, then `openclaw agent --local` turns against a fake model.

What the real binary does (HARNESSES.md): our plugin's `before_prompt_build` handler spawns the hook
and returns `prependContext` (the session's pack, on every turn: OpenClaw does not keep it in the
history) and `appendContext` (what changed since the last turn). `openclaw agent --local` runs one
turn per process; `--session-id` makes two processes turns of one session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fake_model import Text
from harness_e2e import describe
from harnesses import require_cli, run

CAT = "Alice adopted a cat"
SESSION = "memverbs-e2e-turns"


@pytest.fixture
def openclaw(world, fake_api):
    cli = require_cli("openclaw")
    version = run([cli, "--version"], world.env, check=False, timeout=60).stdout
    if "OpenClaw" not in version:  # npm installs an empty placeholder on Node < 24
        message = f"openclaw on PATH is not a working OpenClaw (needs Node >= 24): {version.strip()[:80]!r}"
        if os.environ.get("MEMVERBS_REQUIRE_HARNESSES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    config = Path(world.env["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    provider = {"baseUrl": f"{fake_api.url}/v1", "apiKey": "local-x", "api": "openai-completions",
                "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 128000, "maxTokens": 4096}]}
    config.write_text(json.dumps({"models": {"providers": {"fake": provider}},
                                  "agents": {"defaults": {"model": {"primary": "fake/fake-model"}}}}, indent=2))
    world.memverbs("install", "openclaw")

    def turn(prompt: str) -> None:
        world.harness([cli, "agent", "--local", "--session-id", SESSION, "-m", prompt, "--json"], {}, timeout=150)

    return turn


def test_a_fact_written_between_two_turns_reaches_the_very_next_request(world, fake_api, openclaw):
    fake_api.script(Text("Hello."), Text("A cat."))
    openclaw("hello")
    world.remember(CAT)
    mark = fake_api.mark()
    openclaw("what is new?")

    nxt = fake_api.since(mark)[0]
    users = [text for role, text in nxt.messages() if role == "user" and "what is new?" in text]
    assert users and CAT in users[-1], describe([nxt], limit=1500)
    assert users[-1].index(CAT) < users[-1].index("what is new?"), describe([nxt], limit=1500)  # context leads the prompt

