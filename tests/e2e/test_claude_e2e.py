"""Claude Code, end to end: `memverbs install claude`, then headless sessions against a fake model API.

What the real binary does (Claude Code 2.1.197, HARNESSES.md §1, §7): it streams
`POST /v1/messages?beta=true`; our SessionStart hook's `additionalContext` arrives as a
`{"role": "system"}` message ("SessionStart hook additional context: <pack>…"); MCP tools are
offered as `mcp__memverbs__<verb>`. `claude -p "/compact" --resume <sid>` compacts (it needs
earlier assistant turns: a one-exchange session is "Not enough messages to compact"), and an
HTTP 400 `prompt is too long` makes it compact reactively and retry in the same process.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from fake_model import Text, ToolCall, TooLong
from harness_e2e import ENTITY, SEED_FACT, describe, first_index, packs_in
from harnesses import require_cli

LISBON = "Alice moved to Lisbon"
CAT = "Alice adopted a cat"
CHESS = "Alice plays chess"
SUMMARY = "E2E-SUMMARY-7f3a: the user asked to remember where Alice lives."
REMEMBER = "mcp__memverbs__remember"


@pytest.fixture(autouse=True)
def claude_cli():
    return require_cli("claude")  # before the world is built: a missing CLI skips (fails in CI) at once


@pytest.fixture
def claude(claude_cli, world, fake_api):
    cli = claude_cli
    world.memverbs("install", "claude")
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake"}

    def session(prompt: str, *resume: str) -> dict:
        argv = [cli, "-p", prompt, *(["--resume", resume[0]] if resume else []),
                "--allowedTools", "mcp__memverbs", "--output-format", "json"]
        proc = world.harness(argv, env)
        result = json.loads(proc.stdout)
        assert not result.get("is_error"), proc.stdout
        return result

    session.cli = cli
    return session


def remember_lisbon(api) -> None:
    api.script(
        ToolCall("remember", {"fact": LISBON, "entity": ENTITY, "provenance": "e2e claude session"}, when=api.offers(REMEMBER)),
        Text("Saved."),
    )


def test_session_start_pack_reaches_the_model_as_a_system_message(world, fake_api, claude):
    pack = world.expected_pack("claude")
    assert "Alice Example" in pack and SEED_FACT in pack

    claude("hello")

    first = fake_api.model_requests()[0]
    assert packs_in(first, pack, ("system",)), describe([first])


def test_remember_reaches_our_server_and_a_later_session_pack_shows_it(world, fake_api, claude):
    remember_lisbon(fake_api)
    claude("Please remember that Alice moved to Lisbon.")

    first, *rest = fake_api.model_requests()
    assert REMEMBER in [t.get("name") for t in first.body["tools"]], "the memverbs tools were not offered"
    assert first.reply == "tool_call" and rest, describe(fake_api.model_requests())
    answer = next((text for role, text in rest[0].messages() if '"status": "inserted"' in text), None)
    assert answer is not None, "our server's answer to remember never came back to the model\n" + describe(rest[:1])
    assert LISBON in world.recalled()

    pack = world.expected_pack("claude")
    assert LISBON in pack
    mark = fake_api.mark()
    claude("hello again")  # a new session
    later = fake_api.since(mark)[0]
    assert packs_in(later, pack, ("system",)), describe([later])


def test_after_manual_compaction_the_next_request_carries_a_fresh_pack(world, fake_api, claude):
    remember_lisbon(fake_api)
    sid = claude("Please remember that Alice moved to Lisbon.")["session_id"]

    # The compaction request is the /compact run's only model request. While it is in flight the
    # brain learns a new fact: a pack that has it was built after compaction began.
    mark = fake_api.mark()
    fake_api.script(Text(SUMMARY, before=lambda: world.remember(CAT)))
    claude("/compact", sid)
    assert [r.reply for r in fake_api.since(mark)] == ["text"], describe(fake_api.since(mark))
    post_compact = world.expected_pack("claude")
    assert CAT in post_compact
    assert any(e["moment"] == "post-compact" and e["code"] == "ok" for e in world.hook_log()), world.hook_log()

    # A later fact, so the pack of the next run's own SessionStart(resume) cannot pass for it.
    world.remember(CHESS)
    mark = fake_api.mark()
    claude("What do you know about Alice?", sid)
    nxt = fake_api.since(mark)[0]
    summary_at = first_index(nxt, SUMMARY)
    assert summary_at is not None, "the compaction summary is not in the next request\n" + describe([nxt])
    reinjected = [i for i in packs_in(nxt, post_compact, ("system",)) if i > summary_at and CHESS not in nxt.messages()[i][1]]
    assert reinjected, describe([nxt], limit=1200)


def test_reactive_compaction_on_prompt_too_long_reinjects_the_pack(world, fake_api, claude):
    remember_lisbon(fake_api)
    sid = claude("Please remember that Alice moved to Lisbon.")["session_id"]

    mark = fake_api.mark()
    fake_api.script(TooLong(), Text(SUMMARY, before=lambda: world.remember(CAT)), Text("Alice lives in Lisbon."))
    claude("Where does Alice live?", sid)
    requests = fake_api.since(mark)
    assert [r.reply for r in requests] == ["too_long", "text", "text"], describe(requests)

    retry = requests[2]
    pack = world.expected_pack("claude")
    assert CAT in pack
    summary_at = first_index(retry, SUMMARY)
    assert summary_at is not None, describe([retry])
    assert [i for i in packs_in(retry, pack, ("system",)) if i > summary_at], describe([retry], limit=1200)


def test_a_fact_written_between_two_turns_reaches_the_very_next_request(world, fake_api, claude):
    """One Claude Code process, two user turns: the UserPromptSubmit heartbeat of turn 2 carries the
    fact written after turn 1 — as a delta, not a pack (no SessionStart fires between the turns)."""
    env = {"ANTHROPIC_BASE_URL": fake_api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake"}
    chat = world.conversation([claude.cli, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                               "--verbose", "--allowedTools", "mcp__memverbs"], env)
    try:
        chat.say("hello")
        world.remember(CAT)
        mark = fake_api.mark()
        chat.say("what is new?")
    finally:
        chat.close()
    nxt = fake_api.since(mark)[0]
    deltas = [text for role, text in nxt.messages() if "New facts since" in text and CAT in text]
    assert deltas, describe([nxt], limit=1200)
    assert [e["code"] for e in world.hook_log() if e["moment"] == "heartbeat"][-1] == "ok", world.hook_log()


ALPHA_FACT = "The alpha repository ships its importer on Friday"
BETA_FACT = "The beta repository deploys only on Tuesdays"


def test_sessions_in_two_repositories_each_carry_their_own_projects_memory(world, fake_api, claude, tmp_path):
    """Two real git repositories, one brain: the first request of a session started in each carries that
    project's memory (remembered there without naming it) and not the other's; the user's standing entity both."""
    repos = {}
    for name in ("alpha", "beta"):
        repos[name] = tmp_path / name
        repos[name].mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repos[name], check=True)
        subprocess.run(["git", "remote", "add", "origin", f"git@github.com:org/{name}.git"], cwd=repos[name], check=True)
    for name, fact in (("alpha", ALPHA_FACT), ("beta", BETA_FACT)):
        world.project = repos[name]  # the CLI run inside the repository is in its project, as an agent there is
        world.memverbs("remember", fact, "--provenance", "e2e test")

    for name, mine, theirs in (("alpha", ALPHA_FACT, BETA_FACT), ("beta", BETA_FACT, ALPHA_FACT)):
        world.project = repos[name]
        mark = fake_api.mark()
        claude("hello")
        first = fake_api.since(mark)[0]
        system = "\n".join(text for role, text in first.messages() if role == "system")
        assert f"Project: {name} (`projects/{name}`)" in system, describe([first], limit=1200)
        assert mine in system and theirs not in system, describe([first], limit=1200)
        assert SEED_FACT in system  # the configured standing entity stays in every project
