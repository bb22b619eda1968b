"""Chat providers behind one small interface: a system prompt and a user message in, text and usage out.

Two wire APIs cover the field: the Anthropic Messages API and OpenAI-compatible
chat completions (OpenAI, Ollama, LM Studio, vLLM, OpenRouter, …). Usage counts
are passed through as reported, or None when a provider reports none: the cost
block says "unknown" rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memverbs.server.errors import ProviderError

if TYPE_CHECKING:
    from memverbs.server.settings import LlmSettings

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass
class Completion:
    text: str
    input_tokens: int | None
    output_tokens: int | None
    refused: bool = False  # the model declined; its text is not an answer


class ChatModel(Protocol):
    provider: str
    model: str

    def complete(self, system: str, user: str, max_tokens: int | None = None) -> Completion:
        """One turn, its reply at most `max_tokens` (default: llm.max_tokens); raises ProviderError."""

    def list_models(self) -> list[str]:
        """Model ids the endpoint lists (for doctor); raises ProviderError."""

    def close(self) -> None: ...


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _model_ids(body: dict) -> list[str]:
    data = body.get("data")
    if not isinstance(data, list):
        return []
    return [d["id"] for d in data if isinstance(d, dict) and isinstance(d.get("id"), str)]


class _Base:
    provider = ""

    def __init__(self, settings: LlmSettings, base_url: str, headers: dict[str, str], key_hint: str) -> None:
        from memverbs.server.providers.http import JsonApi  # noqa: PLC0415 - httpx only when configured

        self.model = settings.model
        self.max_tokens = settings.max_tokens
        self.api = JsonApi("llm", settings.base_url or base_url, headers, settings.timeout_seconds, key_hint)

    def _malformed(self, what: str) -> ProviderError:
        return ProviderError(
            "provider_error",
            f"llm provider at {self.api.host} answered in an unexpected shape ({what})",
            "Check llm.provider matches the server's API (anthropic or openai) and llm.base_url.",
        )

    def close(self) -> None:
        self.api.close()


class AnthropicChat(_Base):
    provider = "anthropic"

    def __init__(self, settings: LlmSettings, api_key: str | None, key_hint: str = "") -> None:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(settings, ANTHROPIC_BASE_URL, headers, key_hint)

    def complete(self, system: str, user: str, max_tokens: int | None = None) -> Completion:
        body = self.api.post(
            "/v1/messages",
            {
                "model": self.model,
                "max_tokens": max_tokens or self.max_tokens,
                "system": system,
                "messages": [{"role": "user", "content": user}],
            },
        )
        content = body.get("content")
        if not isinstance(content, list):
            raise self._malformed("no content list")
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        usage = _object(body.get("usage"))
        return Completion(
            text=text,
            input_tokens=_count(usage.get("input_tokens")),
            output_tokens=_count(usage.get("output_tokens")),
            refused=body.get("stop_reason") == "refusal",
        )

    def list_models(self) -> list[str]:
        return _model_ids(self.api.get("/v1/models"))


class OpenAIChat(_Base):
    provider = "openai"

    def __init__(self, settings: LlmSettings, api_key: str | None, key_hint: str = "") -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(settings, OPENAI_BASE_URL, headers, key_hint)

    def complete(self, system: str, user: str, max_tokens: int | None = None) -> Completion:
        body = self.api.post(
            "/chat/completions",
            {
                "model": self.model,
                "max_tokens": max_tokens or self.max_tokens,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            },
        )
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("no choices")
        message = _object(choices[0].get("message"))
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        usage = _object(body.get("usage"))
        return Completion(
            text=text,
            input_tokens=_count(usage.get("prompt_tokens")),
            output_tokens=_count(usage.get("completion_tokens")),
            refused=bool(message.get("refusal")) or choices[0].get("finish_reason") == "content_filter",
        )

    def list_models(self) -> list[str]:
        return _model_ids(self.api.get("/models"))


def _object(value: object) -> dict[str, Any]:
    """A JSON object from a provider's reply, or an empty one when the field is absent or not an object."""
    return value if isinstance(value, dict) else {}
