"""OpenClaw, end to end: `memverbs install openclaw`, then `openclaw agent --local` turns against a fake model.

What the real binary does (HARNESSES.md): our plugin's `before_prompt_build` handler spawns the hook
and returns `prependContext` (the session's pack, on every turn: OpenClaw does not keep it in the
history) and `appendContext` (what changed since the last turn). `openclaw agent --local` runs one
turn per process; `--session-id` makes two processes turns of one session. (Compaction needs a running Gateway:
test_openclaw_gateway_e2e.py.)

The brain lives outside HOME/.memverbs and OpenClaw runs without MEMVERBS_HOME: the plugin finds
the brain only through the config `memverbs install` wrote (an empty default brain has no pack).
Every `agent --local` turn costs tens of seconds on 2 cores, so one session checks both the pack
at the start and a fact written between turns.
"""

from __future__ import annotations

import json

import pytest
from fake_model import Text
from harness_e2e import PACK_HEADER, SEED_FACT, describe
from harnesses import memverbs, run
from openclaw_support import installed_openclaw

CAT = "Alice adopted a cat"
SESSION = "memverbs-e2e-turns"


@pytest.fixture
def openclaw(world, fake_api, tmp_path):
    cli, bare = installed_openclaw(world, fake_api, tmp_path)

    def turn(prompt: str) -> None:
        bare.harness([cli, "agent", "--local", "--session-id", SESSION, "-m", prompt, "--json"], {}, timeout=150)

    return turn


def test_the_pack_leads_the_first_turn_and_a_fact_written_between_turns_the_next(world, fake_api, openclaw):
    expected = run([memverbs(), "hook", "session-start", "--harness", "openclaw"], world.env, cwd=world.project,
                   input=json.dumps({"session_id": "expected-pack"})).stdout.strip()
    assert expected.startswith(PACK_HEADER) and SEED_FACT in expected, expected
    fake_api.script(Text("Hello."), Text("A cat."))
    openclaw("hello")
    first = fake_api.model_requests()
    assert first, "OpenClaw sent no model request"
    users = [text for role, text in first[0].messages() if role == "user" and "hello" in text]
    # The pack our hook prints leads the user message: the plugin loaded and found the brain through its config.
    assert users and expected in users[0] and users[0].index(expected) < users[0].rindex("hello"), describe(first[:1], limit=1500)

    world.remember(CAT)
    mark = fake_api.mark()
    openclaw("what is new?")

    nxt = fake_api.since(mark)[0]
    users = [text for role, text in nxt.messages() if role == "user" and "what is new?" in text]
    assert users and CAT in users[-1], describe([nxt], limit=1500)
    assert users[-1].index(CAT) < users[-1].index("what is new?"), describe([nxt], limit=1500)  # context leads the prompt

