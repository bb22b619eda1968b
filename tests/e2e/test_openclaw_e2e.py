"""OpenClaw, end to end: `memverbs install openclaw`, then `openclaw agent --local` turns against a fake model.

What the real binary does (HARNESSES.md): our plugin's `before_prompt_build` handler spawns the hook
and returns `prependContext` (the session's pack, on every turn: OpenClaw does not keep it in the
history) and `appendContext` (what changed since the last turn). `openclaw agent --local` runs one
turn per process; `--session-id` makes two processes turns of one session. (Compaction needs a running Gateway:
test_openclaw_gateway_e2e.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_model import Text
from harness_e2e import describe
from openclaw_support import fake_model_config, require_openclaw

CAT = "Alice adopted a cat"
SESSION = "memverbs-e2e-turns"


@pytest.fixture
def openclaw(world, fake_api):
    cli = require_openclaw(world.env)
    config = Path(world.env["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(fake_model_config(fake_api.url), indent=2))
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

