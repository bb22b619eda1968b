"""synthesize with a chat model over respx-mocked HTTP: every branch of the precedence table, both chat APIs."""

import json

import httpx
import pytest
import respx
from helpers import page
from provider_fakes import (
    CHAT_BASE,
    EMBED_BASE,
    OPENAI_CHAT_BASE,
    PROVIDER_SECRET,
    anthropic_reply,
    clients,
    embeddings_env,
    hashing_embeddings,
    llm_env,
    no_keyring,  # noqa: F401 - fixture
    openai_reply,
    provider_error,
)

from memverbs.server.conformance.runner import validate
from memverbs.server.protocol.schemas import RESPONSE_SCHEMAS
from memverbs.server.runtime import Runtime

MESSAGES = f"{CHAT_BASE}/v1/messages"
COMPLETIONS = f"{OPENAI_CHAT_BASE}/chat/completions"
QUESTION = "What did we decide about the payments provider?"
USAGE = {"input_tokens": 1000, "output_tokens": 200}


def answer(**fields) -> str:
    return json.dumps({"answer": "We chose Acme.", "sources": ["companies/acme"], "gaps": [], **fields})


@pytest.fixture
def rt(home, monkeypatch):
    llm_env(monkeypatch)
    runtime = Runtime(home)
    yield runtime
    runtime.close()


@pytest.fixture
def seeded(rt):
    local, remote = clients(rt)
    page(local, "companies/acme", "Acme Payments", body="We decided to move the payments provider to Acme in May.")
    page(local, "notes/payments-review", "Payments review", body="The payments provider review compared Acme and Beta.")
    local.ok("remember", fact="Payments provider contract with Acme signed", provenance="email", entity="companies/acme")
    return local, remote


def no_leak(body: dict) -> None:
    assert PROVIDER_SECRET not in json.dumps(body)


# -- 1. no LLM configured: unavailable, whatever gather would find -------------------------


def test_no_llm_is_unavailable_even_with_pages(home, runtime):
    local, remote = clients(runtime)
    page(local, "companies/acme", "Acme Payments", body="payments provider")
    err = remote.err("synthesize", question=QUESTION)
    assert err["error"] == "unavailable" and err["detail"] == "chat gateway unconfigured (NO_ANTHROPIC_API_KEY)"
    assert "llm.model" in err["suggestion"]


def test_a_model_without_its_key_is_unavailable_with_the_key_fix(home, monkeypatch, no_keyring):  # noqa: F811
    llm_env(monkeypatch, key=None)
    monkeypatch.setenv("MEMVERBS_LLM__BASE_URL", "")
    rt = Runtime(home)
    try:
        err = clients(rt)[1].err("synthesize", question=QUESTION)
        assert err["error"] == "unavailable" and err["detail"] == "chat gateway unconfigured (NO_ANTHROPIC_API_KEY)"
        assert "MEMVERBS_LLM_API_KEY" in err["suggestion"] and "no API key" in err["suggestion"]
    finally:
        rt.close()


# -- 4. compose ok --------------------------------------------------------------------------


@respx.mock
def test_ok_answer_sources_gaps_cost_and_shape(seeded):
    _, remote = seeded
    route = respx.post(MESSAGES).mock(
        return_value=anthropic_reply(answer(sources=["companies/acme", "made/up"], gaps=["when it starts"]), usage=USAGE)
    )
    body = remote.ok("synthesize", question=QUESTION)
    assert list(body) == [
        "answer", "sources", "gaps", "cost", "synthesis_status", "pages_gathered", "takes_gathered", "warnings", "protocol_version",
    ]
    assert body["answer"] == "We chose Acme." and body["synthesis_status"] == "ok"
    assert body["sources"] == ["companies/acme"] and body["gaps"] == ["when it starts"]
    assert body["warnings"] == ["CITATION_PAGE_NOT_IN_BRAIN: made/up"]
    assert body["cost"] == {"model": "claude-sonnet-4-5", "input_tokens": 1000, "output_tokens": 200, "usd_estimate": 0.006}
    assert body["pages_gathered"] == 2 and body["takes_gathered"] == 1
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []
    sent = json.loads(route.calls[0].request.content)
    prompt = sent["messages"][0]["content"]
    assert "companies/acme" in prompt and "Payments provider contract with Acme signed" in prompt
    assert "JSON" in sent["system"]


@respx.mock
def test_fenced_json_and_missing_usage(seeded):
    _, remote = seeded
    respx.post(MESSAGES).mock(return_value=anthropic_reply("```json\n" + answer() + "\n```"))
    body = remote.ok("synthesize", question=QUESTION)
    assert body["synthesis_status"] == "ok"
    assert body["cost"] == {"model": "claude-sonnet-4-5", "input_tokens": None, "output_tokens": None, "usd_estimate": None}


@respx.mock
def test_unknown_model_price_is_null_and_configured_price_counts(home, monkeypatch, seeded):
    _, _remote = seeded
    respx.post(MESSAGES).mock(return_value=anthropic_reply(answer(), usage=USAGE))
    monkeypatch.setenv("MEMVERBS_LLM__MODEL", "my-local-model")
    rt = Runtime(home)
    try:
        assert clients(rt)[1].ok("synthesize", question=QUESTION)["cost"]["usd_estimate"] is None
    finally:
        rt.close()
    monkeypatch.setenv("MEMVERBS_LLM__PRICE_INPUT_PER_MTOK", "1")
    monkeypatch.setenv("MEMVERBS_LLM__PRICE_OUTPUT_PER_MTOK", "10")
    rt = Runtime(home)
    try:
        assert clients(rt)[1].ok("synthesize", question=QUESTION)["cost"]["usd_estimate"] == 0.003
    finally:
        rt.close()


# -- 2. compose failed, pages gathered: extractive fallback ----------------------------------

FAILURES = [
    (provider_error(429), "LLM_CALL_FAILED: rate_limited", False),
    (httpx.ReadTimeout("slow"), "LLM_CALL_FAILED: timeout", False),
    (provider_error(502), "LLM_CALL_FAILED: provider_error", False),
    (httpx.ConnectError("refused"), "LLM_CALL_FAILED: network", False),
    (provider_error(404), "MODEL_NOT_USABLE:model_not_found", False),
    (anthropic_reply("I can't help with that.", usage=USAGE, stop_reason="refusal"), "LLM_OUTPUT_NOT_JSON", True),
    (anthropic_reply("Sure! The answer is Acme.", usage=USAGE), "LLM_OUTPUT_NOT_JSON", True),
    (anthropic_reply(answer(answer="   "), usage=USAGE), "SYNTHESIS_EMPTY_ANSWER", True),
]


@pytest.mark.parametrize(("reply", "warning", "billed"), FAILURES, ids=[w for _, w, _ in FAILURES])
@respx.mock
def test_compose_failure_with_pages_is_an_extractive_fallback(seeded, reply, warning, billed):
    _, remote = seeded
    route = respx.post(MESSAGES)
    route.mock(side_effect=reply) if isinstance(reply, Exception) else route.mock(return_value=reply)
    body = remote.ok("synthesize", question=QUESTION)
    no_leak(body)
    assert body["synthesis_status"] == "extractive_fallback"
    assert warning in body["warnings"]
    lines = body["answer"].splitlines()
    assert lines[0] == "No synthesized answer — extractive excerpts from the 2 most relevant retrieved page(s):"
    [acme] = [line for line in lines[1:] if line.startswith("- Acme Payments [companies/acme]: ")]
    assert "move the payments provider" in acme
    assert all(len(line.split("]: ", 1)[1]) <= 400 for line in lines[1:])
    assert sorted(body["sources"]) == ["companies/acme", "notes/payments-review"]  # only what was gathered
    assert "Sure!" not in body["answer"] and "can't help" not in body["answer"]  # nothing the model said
    assert (body["cost"]["input_tokens"], body["cost"]["output_tokens"]) == ((1000, 200) if billed else (None, None))
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []


# -- 3. compose failed, nothing gathered: unavailable ----------------------------------------


@pytest.mark.parametrize(
    ("reply", "code", "detail"),
    [
        (httpx.ReadTimeout("slow"), "LLM_CALL_FAILED", "LLM_CALL_FAILED: timeout"),
        (anthropic_reply("not json at all"), "LLM_OUTPUT_NOT_JSON", "LLM_OUTPUT_NOT_JSON"),
        (anthropic_reply(answer(answer="")), "SYNTHESIS_EMPTY_ANSWER", "SYNTHESIS_EMPTY_ANSWER"),
        (provider_error(404), "MODEL_NOT_USABLE", "MODEL_NOT_USABLE:model_not_found"),
    ],
)
@respx.mock
def test_compose_failure_with_nothing_gathered_is_unavailable(rt, reply, code, detail):
    route = respx.post(MESSAGES)
    route.mock(side_effect=reply) if isinstance(reply, Exception) else route.mock(return_value=reply)
    err = clients(rt)[1].err("synthesize", question="Who won the 1954 chess olympiad?")
    assert list(err) == ["error", "message", "suggestion", "detail", "protocol_version"]
    assert err["error"] == "unavailable"
    assert err["message"] == f"retrieved 0 pages; compose failed: {code}"
    assert err["detail"] == detail and "Rephrase or broaden" in err["suggestion"]
    no_leak(err)


@respx.mock
def test_compose_ok_with_nothing_gathered_is_still_an_answer(rt):
    respx.post(MESSAGES).mock(return_value=anthropic_reply(answer(answer="Nothing in the brain says.", sources=[]), usage=USAGE))
    body = clients(rt)[1].ok("synthesize", question="Who won the 1954 chess olympiad?")
    assert body["synthesis_status"] == "ok" and body["sources"] == [] and body["pages_gathered"] == 0


# -- the OpenAI-compatible API ---------------------------------------------------------------


@respx.mock
def test_openai_compatible_ok_and_failure(home, monkeypatch):
    llm_env(monkeypatch, provider="openai", model="gpt-4o-mini")
    rt = Runtime(home)
    try:
        local, remote = clients(rt)
        page(local, "companies/acme", "Acme Payments", body="We decided to move the payments provider to Acme.")
        route = respx.post(COMPLETIONS).mock(
            return_value=openai_reply(answer(), usage={"prompt_tokens": 1000, "completion_tokens": 100})
        )
        body = remote.ok("synthesize", question=QUESTION)
        assert body["synthesis_status"] == "ok" and body["cost"]["usd_estimate"] == 0.00021
        assert json.loads(route.calls[0].request.content)["model"] == "gpt-4o-mini"
        route.mock(return_value=openai_reply(None, refusal="no"))
        body = remote.ok("synthesize", question=QUESTION)
        assert body["synthesis_status"] == "extractive_fallback" and body["warnings"] == ["LLM_OUTPUT_NOT_JSON"]
    finally:
        rt.close()


# -- what reaches the model ------------------------------------------------------------------


@respx.mock
def test_remote_callers_never_send_private_memory_to_the_model(seeded):
    local, remote = seeded
    local.ok("remember", fact="Payments provider PRIVATE-9931 discount", provenance="p", entity="companies/acme", visibility="private")
    page(local, "notes/private-pay", "Private payments", body="payments provider PAGE-7714", visibility="private")
    route = respx.post(MESSAGES).mock(return_value=anthropic_reply(answer(), usage=USAGE))
    remote.ok("synthesize", question=QUESTION)
    sent = route.calls[-1].request.content.decode()
    assert "PRIVATE-9931" not in sent and "PAGE-7714" not in sent
    local.ok("synthesize", question=QUESTION)
    sent = route.calls[-1].request.content.decode()
    assert "PRIVATE-9931" in sent and "PAGE-7714" in sent


@respx.mock
def test_window_excludes_pages_and_says_so(seeded):
    _, remote = seeded
    respx.post(MESSAGES).mock(return_value=anthropic_reply(answer(), usage=USAGE))
    body = remote.ok("synthesize", question=QUESTION, until="2001-01-01")
    assert "WINDOW_EXCLUDED_2_PAGES" in body["warnings"] and body["pages_gathered"] == 0 and body["takes_gathered"] == 0
    body = remote.ok("synthesize", question=QUESTION, since="2001-01")
    assert body["pages_gathered"] == 2 and not any(w.startswith("WINDOW_") for w in body["warnings"])


@respx.mock
def test_gather_uses_the_vector_arm_and_survives_its_failure(home, monkeypatch):
    llm_env(monkeypatch)
    embeddings_env(monkeypatch)
    embed = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    chat = respx.post(MESSAGES).mock(return_value=anthropic_reply(answer(sources=["notes/deploy-freeze"]), usage=USAGE))
    rt = Runtime(home)
    try:
        local, remote = clients(rt)
        page(local, "notes/deploy-freeze", "Deploy freeze", body="We never ship releases on Fridays.")
        body = remote.ok("synthesize", question="Can we halt shipping before the weekend?")
        assert body["sources"] == ["notes/deploy-freeze"] and body["pages_gathered"] == 1
        assert "notes/deploy-freeze" in chat.calls[-1].request.content.decode()

        embed.mock(return_value=provider_error(500))
        body = remote.ok("synthesize", question="deploy freeze")
        assert "QUESTION_EMBED_FAILED" in body["warnings"] and body["pages_gathered"] == 1
        no_leak(body)
    finally:
        rt.close()
