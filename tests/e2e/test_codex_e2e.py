"""Codex, end to end: `memverbs install codex`, then `codex exec` sessions against a fake model API.

What the real binary does (Codex 0.171.0, HARNESSES.md §2, §7): with a custom
`model_provider` (`wire_api = "responses"`) it streams `POST /v1/responses`; our trusted
SessionStart hook's `additionalContext` arrives verbatim as an `input` message with
`"role": "developer"`; the MCP tools are offered as one `{"type": "namespace", "name":
"mcp__memverbs", "tools": [{"type": "function", "name": "remember", …}, …]}` and the model
calls one with a `function_call` item carrying `"namespace": "mcp__memverbs"`. With
`model_auto_compact_token_limit` below the usage a reply reports, Codex compacts in the
middle of the turn (a tool-less request asking for a summary), fires SessionStart with
`source: "compact"`, and continues with the summary in place of the history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_model import Text, ToolCall
from harness_e2e import CODEX_KEY_VAR as API_KEY_VAR
from harness_e2e import ENTITY, SEED_FACT, describe, first_index, packs_in
from harness_e2e import codex_provider_config as provider_config
from harnesses import require_cli

LISBON = "Alice moved to Lisbon"
CAT = "Alice adopted a cat"
SUMMARY = "E2E-SUMMARY-5c1e: the user asked to remember where Alice lives."
@pytest.fixture(autouse=True)
def codex_cli():
    return require_cli("codex")  # before the world is built: a missing CLI skips (fails in CI) at once


@pytest.fixture
def codex(codex_cli, world, fake_api):
    cli = codex_cli
    (Path(world.env["CODEX_HOME"]) / "config.toml").write_text(provider_config(fake_api.url))
    world.memverbs("install", "codex")

    def session(prompt: str, *config: str, resume: str | None = None) -> list[dict]:
        argv = [cli, "exec", *(["resume", resume] if resume else []), "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", "--json", "--disable", "plugins", "-c", "analytics.enabled=false"]
        for setting in config:
            argv += ["-c", setting]
        proc = world.harness([*argv, prompt], {API_KEY_VAR: "sk-e2e-fake"})
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert any(e.get("type") == "turn.completed" for e in events), proc.stdout + proc.stderr
        return events

    return session


def remember_lisbon(api, **usage) -> None:
    api.script(
        ToolCall("remember", {"fact": LISBON, "entity": ENTITY, "provenance": "e2e codex session"},
                 when=api.offers("mcp__memverbs/remember"), **usage),
    )


def memverbs_namespace(request) -> dict | None:
    return next((t for t in request.body.get("tools", []) if t.get("name") == "mcp__memverbs"), None)


def test_session_start_pack_reaches_the_model_as_a_developer_message(world, fake_api, codex):
    pack = world.expected_pack("codex")
    assert "Alice Example" in pack and SEED_FACT in pack

    codex("hello")

    first = fake_api.model_requests()[0]
    developer = [text for role, text in first.messages() if role == "developer"]
    assert pack in developer, describe([first])  # verbatim: the whole developer message is our pack


def test_remember_reaches_our_server_and_a_later_session_pack_shows_it(world, fake_api, codex):
    remember_lisbon(fake_api)
    fake_api.script(Text("Saved."))
    events = codex("Please remember that Alice moved to Lisbon.")

    first, *rest = fake_api.model_requests()
    namespace = memverbs_namespace(first)
    assert namespace and namespace.get("type") == "namespace", "the memverbs tools were not offered\n" + json.dumps(first.body.get("tools"))[:2000]
    assert "remember" in [t.get("name") for t in namespace["tools"]]
    assert first.reply == "tool_call" and rest, describe(fake_api.model_requests())
    call = next(i for i in rest[0].body["input"] if i.get("type") == "function_call")
    assert (call["namespace"], call["name"]) == ("mcp__memverbs", "remember")
    output = next(i for i in rest[0].body["input"] if i.get("type") == "function_call_output" and i["call_id"] == call["call_id"])
    assert '"status": "inserted"' in json.dumps(output["output"]).replace('\\"', '"'), output
    tool_items = [e["item"] for e in events if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"]
    assert [(i["server"], i["tool"], i["status"]) for i in tool_items] == [("memverbs", "remember", "completed")]
    assert LISBON in world.recalled()

    pack = world.expected_pack("codex")
    assert LISBON in pack
    mark = fake_api.mark()
    codex("hello again")  # a new session
    later = fake_api.since(mark)[0]
    assert packs_in(later, pack, ("developer",)), describe([later])


def test_after_auto_compaction_the_next_request_carries_a_fresh_pack(world, fake_api, codex):
    # The tool call's reply reports more tokens than the compaction limit, so Codex compacts before
    # it continues the turn. While the compaction request is in flight the brain learns a new fact:
    # a pack that has it was built after compaction began.
    remember_lisbon(fake_api, input_tokens=60_000)
    fake_api.script(Text(SUMMARY, before=lambda: world.remember(CAT)), Text("Saved."))
    codex("Please remember that Alice moved to Lisbon.", "model_auto_compact_token_limit=5000")

    requests = fake_api.model_requests()
    assert [r.reply for r in requests] == ["tool_call", "text", "text"], describe(requests)
    compaction, nxt = requests[1], requests[2]
    assert memverbs_namespace(compaction) is None, "the compaction request should offer no tools"
    assert any(e["moment"] == "post-compact" and e["code"] == "ok" for e in world.hook_log()), world.hook_log()

    pack = world.expected_pack("codex")
    assert CAT in pack and LISBON in pack
    summary_at = first_index(nxt, SUMMARY)
    assert summary_at is not None, "the compaction summary is not in the next request\n" + describe([nxt])
    assert [i for i in packs_in(nxt, pack, ("developer",)) if i > summary_at], describe([nxt], limit=1200)


def test_a_fact_written_between_two_turns_reaches_the_very_next_request(world, fake_api, codex):
    """Two turns of one Codex session (`codex exec`, then `codex exec resume <thread>`): a fact another
    process writes between them is in the first model request of turn 2.

    `codex exec` takes one prompt per process, so turn 2 is a resume, and Codex 0.171.0 fires
    SessionStart (`source: "resume"`) before the turn's UserPromptSubmit: the resume pack carries the
    fact, and the heartbeat that follows finds nothing the pack did not already show (`empty`)."""
    events = codex("hello")
    thread = next(e["thread_id"] for e in events if e.get("type") == "thread.started")
    world.remember(CAT)
    mark = fake_api.mark()
    codex("what is new?", resume=thread)

    nxt = fake_api.since(mark)[0]
    carriers = [role for role, text in nxt.messages() if CAT in text]
    assert carriers and set(carriers) <= {"developer", "user"}, describe([nxt], limit=1200)
    turn2 = [(e["moment"], e["code"]) for e in world.hook_log() if e["harness"] == "codex" and e["moment"] != "capture"][-2:]
    assert turn2[0] == ("session-start", "ok") and turn2[1][0] == "heartbeat", world.hook_log()
