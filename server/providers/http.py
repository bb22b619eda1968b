"""JSON over HTTP for the providers, with every failure sorted into one closed class.

`httpx` is imported here, and this module is imported only when a provider is
actually configured and called, so `memverbs hook` and the server's start-up
never load it. A failure becomes a ProviderError whose message memverbs writes
itself (what was called, the HTTP status, the class): a provider's response
text can carry prompts, keys echoed back or internals, so it never travels on.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx

from memverbs.server.errors import ProviderError


class JsonApi:
    """One provider endpoint family: a base URL, fixed headers, a timeout; a pooled client made on first use."""

    def __init__(
        self, what: str, base_url: str, headers: dict[str, str], timeout_seconds: float, key_hint: str = ""
    ) -> None:
        self.what = what  # "embeddings" / "llm": names the config section in fixes
        self.key_hint = key_hint  # how to set this provider's key, for the fix of a rejected one
        self.base_url = base_url.rstrip("/")
        self.headers = headers
        self.timeout = timeout_seconds
        self._client: httpx.Client | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc or self.base_url

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(headers=self.headers, timeout=self.timeout)
        return self._client

    def post(self, path: str, payload: dict) -> dict:
        return self._send("POST", path, payload)

    def get(self, path: str) -> dict:
        return self._send("GET", path, None)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _send(self, method: str, path: str, payload: dict | None) -> dict:
        url = f"{self.base_url}/{path.lstrip('/')}"
        try:
            response = self._http().request(method, url, json=payload)
        except httpx.TimeoutException as exc:
            raise ProviderError(
                "timeout",
                f"{self.what} provider at {self.host} did not answer within {self.timeout:g}s",
                f"Check that the server is up and not overloaded, or raise {self.what}.timeout_seconds.",
            ) from exc
        except (httpx.TransportError, httpx.InvalidURL, ValueError) as exc:
            raise ProviderError(
                "network",
                f"cannot reach the {self.what} provider at {self.host or self.base_url!r} ({type(exc).__name__})",
                f"Check {self.what}.base_url and that the server is running and reachable from this machine.",
            ) from exc
        if response.status_code >= 400:
            raise self._status_error(response)
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ProviderError(
                "provider_error",
                f"{self.what} provider at {self.host} answered HTTP {response.status_code} with a body that is not JSON",
                f"Check that {self.what}.base_url points at the API root (for OpenAI-compatible servers it ends in /v1).",
                status=response.status_code,
            ) from exc
        if not isinstance(body, dict):
            raise ProviderError(
                "provider_error",
                f"{self.what} provider at {self.host} answered with JSON that is not an object",
                f"Check that {self.what}.base_url points at the API root.",
                status=response.status_code,
            )
        return body

    def _status_error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        where = f"{self.what} provider at {self.host}"
        # The body is read only to classify (an "overloaded" 503); it is never quoted.
        overloaded = status >= 500 and "overload" in response.text[:2000].lower()
        if status in (429, 529) or overloaded:
            return ProviderError(
                "rate_limited",
                f"{where} is rate limiting or overloaded (HTTP {status})",
                "Wait a moment and retry; check the account's rate limits and quota.",
                status=status,
            )
        if status in (401, 403):
            return ProviderError(
                "provider_error",
                f"{where} rejected the API key (HTTP {status})",
                f"Set a valid API key: {self.key_hint or 'see `memverbs docs configuration`'}.",
                status=status,
            )
        if status == 404:
            return ProviderError(
                "model_unusable",
                f"{where} does not know this model or path (HTTP 404)",
                f"Check {self.what}.model and {self.what}.base_url (OpenAI-compatible servers end in /v1).",
                status=status,
            )
        return ProviderError(
            "provider_error",
            f"{where} failed (HTTP {status})",
            f"Retry; if it persists check {self.what}.model and {self.what}.base_url.",
            status=status,
        )
