"""The two chat clients (Anthropic Messages, OpenAI-compatible completions) over real httpx, mocked with respx."""

import json

import httpx
import pytest
import respx
from provider_fakes import CHAT_BASE, OPENAI_CHAT_BASE, PROVIDER_SECRET, anthropic_reply, openai_reply, provider_error

from memverbs.server.errors import ProviderError
from memverbs.server.providers.chat import AnthropicChat, OpenAIChat
from memverbs.server.settings import LlmSettings


def anthropic(**kw) -> AnthropicChat:
    return AnthropicChat(LlmSettings(provider="anthropic", model="claude-sonnet-4-5", base_url=CHAT_BASE, **kw), "sk-a")


def openai(**kw) -> OpenAIChat:
    return OpenAIChat(LlmSettings(provider="openai", model="gpt-4o-mini", base_url=OPENAI_CHAT_BASE, **kw), "sk-o")


@respx.mock
def test_anthropic_request_and_usage():
    route = respx.post(f"{CHAT_BASE}/v1/messages").mock(
        return_value=anthropic_reply("hi", usage={"input_tokens": 12, "output_tokens": 3})
    )
    out = anthropic(max_tokens=99).complete("sys", "user text")
    assert (out.text, out.input_tokens, out.output_tokens, out.refused) == ("hi", 12, 3, False)
    req = route.calls[0].request
    assert req.headers["x-api-key"] == "sk-a" and req.headers["anthropic-version"] == "2023-06-01"
    body = json.loads(req.content)
    assert body["system"] == "sys" and body["messages"] == [{"role": "user", "content": "user text"}]
    assert body["max_tokens"] == 99 and body["model"] == "claude-sonnet-4-5"


@respx.mock
def test_anthropic_missing_usage_and_refusal():
    respx.post(f"{CHAT_BASE}/v1/messages").mock(return_value=anthropic_reply("no", stop_reason="refusal"))
    out = anthropic().complete("s", "u")
    assert out.refused and out.input_tokens is None and out.output_tokens is None


@respx.mock
def test_openai_request_usage_and_refusal():
    route = respx.post(f"{OPENAI_CHAT_BASE}/chat/completions").mock(
        return_value=openai_reply("hello", usage={"prompt_tokens": 7, "completion_tokens": 2})
    )
    out = openai().complete("sys", "u")
    assert (out.text, out.input_tokens, out.output_tokens) == ("hello", 7, 2)
    body = json.loads(route.calls[0].request.content)
    assert body["messages"][0] == {"role": "system", "content": "sys"}
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-o"

    respx.post(f"{OPENAI_CHAT_BASE}/chat/completions").mock(return_value=openai_reply(None, refusal="I can't"))
    out = openai().complete("s", "u")
    assert out.refused and out.text == "" and out.input_tokens is None


@pytest.mark.parametrize("make", [anthropic, openai])
@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (503, "provider_error"), (404, "model_unusable")])
@respx.mock
def test_errors_are_classified_without_provider_text(make, status, kind):
    respx.route(method="POST").mock(return_value=provider_error(status))
    with pytest.raises(ProviderError) as exc:
        make().complete("s", "u")
    assert exc.value.kind == kind and exc.value.status == status
    assert PROVIDER_SECRET not in exc.value.message


@respx.mock
def test_overloaded_503_counts_as_rate_limited():
    respx.post(f"{CHAT_BASE}/v1/messages").mock(return_value=httpx.Response(503, json={"error": {"type": "overloaded_error"}}))
    with pytest.raises(ProviderError) as exc:
        anthropic().complete("s", "u")
    assert exc.value.kind == "rate_limited"


@respx.mock
def test_model_lists():
    respx.get(f"{CHAT_BASE}/v1/models").mock(return_value=httpx.Response(200, json={"data": [{"id": "claude-sonnet-4-5"}]}))
    respx.get(f"{OPENAI_CHAT_BASE}/models").mock(return_value=httpx.Response(200, json={"data": [{"id": "gpt-4o-mini"}]}))
    assert anthropic().list_models() == ["claude-sonnet-4-5"]
    assert openai().list_models() == ["gpt-4o-mini"]
