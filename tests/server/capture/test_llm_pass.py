"""The optional LLM pass of capture, the chat model mocked at the HTTP layer (respx): off by default,
never shown a secret or a `<private>` span, its facts vetted and marked as the model's, and a
per-session budget that holds across captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import respx
from provider_fakes import CHAT_BASE, anthropic_reply, llm_env

from memverbs.server.capture.worker import run_job

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "capture"  # recorded from the real binaries
MESSAGES = f"{CHAT_BASE}/v1/messages"
NEVER = json.loads((DATA / "annotations.json").read_text())["claude-secrets"]["never"] + ["hunter2-correct-horse", "VPN password"]
PROPOSED = "The CI secrets hold the AWS key for deploys."
SID = "b21c1618-5927-4f77-a6f2-d79e4045ff8a"  # the recorded session's own id


def reply(*facts: dict, usage: dict | None = None):
    return anthropic_reply(json.dumps({"facts": list(facts)}), usage=usage or {"input_tokens": 900, "output_tokens": 60})


@pytest.fixture
def session(home, tmp_path, monkeypatch):
    """claude-secrets, a recorded session full of secrets and a `<private>` span, outside any project;
    a chat model configured (claude-sonnet-4-5: $3 / $15 per million tokens)."""
    llm_env(monkeypatch)
    path = tmp_path / "s.jsonl"
    path.write_text((DATA / "claude-secrets.jsonl").read_text().replace("/bench/project", str(tmp_path / "elsewhere")))

    def capture(session_id: str = "llm-1") -> dict:
        assert run_job({"harness": "claude", "session_id": session_id, "transcript_path": str(path), "home": str(home.root)}) == "ok"
        line = json.loads((home.logs / "capture.jsonl").read_text().splitlines()[-1])
        return line["counts"]

    capture.path = path
    return capture


def facts(local) -> list[tuple[str, str]]:
    return sorted((f["fact"], f["provenance"]) for f in local.ok("recall", entity="people/me")["facts"])


@respx.mock
def test_off_by_default_even_with_a_chat_model(session, local):
    route = respx.post(MESSAGES).mock(return_value=reply())
    counts = session()
    assert route.call_count == 0 and "llm" not in counts
    assert [f for f, _ in facts(local)] == ["We decided to keep secrets in the OS keyring from now on."]


@respx.mock
def test_the_model_sees_no_secret_and_its_facts_are_vetted_and_marked(session, local, monkeypatch):
    monkeypatch.setenv("MEMVERBS_CAPTURE__LLM", "true")
    route = respx.post(MESSAGES).mock(return_value=reply(
        {"fact": PROPOSED, "kind": "fact"},
        {"fact": "The billing service token is ghp_R2d2C3poBb8Yoda4LukeLeia5HanSolo9Chewie.", "kind": "fact"},  # a secret
        {"fact": "The database password is [redacted:password].", "kind": "fact"},  # needed redacting: no use
        {"fact": "We decided to keep secrets in the OS keyring from now on.", "kind": "commitment"},  # the rules kept it
        {"fact": "Maybe.", "kind": "fact"},  # not a sentence worth keeping
        "not an object",
    ))
    counts = session()
    assert route.call_count == 1, counts
    [call] = route.calls
    sent = call.request.content.decode()
    assert [s for s in NEVER if s in sent] == [], sent
    assert "[redacted:" in sent and "We decided to keep secrets in the OS keyring" in sent  # the session, redacted
    assert counts["llm"] == {"code": "ok", "proposed": 6, "kept": 1, "tokens": 960, "usd": 0.0036}, counts
    assert facts(local) == sorted([
        ("We decided to keep secrets in the OS keyring from now on.", f"capture:claude session {SID}"),
        (PROPOSED, f"capture:claude session {SID}, proposed by claude-sonnet-4-5"),
    ])
    page = local.ok("get_page", slug=local.ok("list_pages", prefix="sessions/")["pages"][0]["slug"])["body"]
    assert f"{PROPOSED} (proposed by the model)" in page
    brain = b"".join(p.read_bytes() for p in home_files(local))
    assert not [s for s in NEVER if s.encode() in brain]


def home_files(local) -> list[Path]:
    from memverbs.server.home import Home

    return [p for p in Home.from_env().root.glob("brain.db*") if p.is_file()]


@respx.mock
def test_the_budget_cuts_the_digest_and_holds_across_a_sessions_captures(session, local, monkeypatch):
    """$0.025 a session: the reply's ceiling (1,000 tokens at $15/M = $0.015) leaves ~3,300 input
    tokens, so the digest is cut; what the reply reports is spent; the next capture of the session,
    its transcript grown, finds too little left and asks nothing. Another session has its own budget."""
    monkeypatch.setenv("MEMVERBS_CAPTURE__LLM", "true")
    monkeypatch.setenv("MEMVERBS_CAPTURE__LLM_MAX_USD", "0.025")
    route = respx.post(MESSAGES).mock(return_value=reply({"fact": PROPOSED, "kind": "fact"},
                                                         usage={"input_tokens": 3000, "output_tokens": 100}))
    long_turn = {"type": "user", "sessionId": SID, "message": {"role": "user", "content": ""}}
    with session.path.open("a") as fh:  # a long session: 60 turns of ~500 characters
        for n in range(60):
            fh.write(json.dumps({**long_turn, "message": {"role": "user", "content": f"Look at module {n}. " * 30}}) + "\n")
    first = session()
    request = json.loads(route.calls[0].request.content)
    sent = request["messages"][0]["content"]
    assert request["max_tokens"] == 1000 and len(sent) <= 3_334 * 3 and "lines left out" in sent, len(sent)
    assert first["llm"]["code"] == "ok" and first["llm"]["usd"] == pytest.approx(0.0105), first

    with session.path.open("a") as fh:
        fh.write(json.dumps({**long_turn, "message": {"role": "user", "content": "From now on, use tabs in this repo."}}) + "\n")
    second = session()
    assert route.call_count == 1 and second["llm"]["code"] == "budget_spent", second
    assert "From now on, use tabs in this repo." in [f for f, _ in facts(local)]  # the rules still capture

    assert session("llm-2")["llm"]["code"] == "ok" and route.call_count == 2
