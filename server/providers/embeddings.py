"""Embedding providers behind one small interface: texts in, unit-length float32 rows out.

`Embedder` is what search, remember and reindex call. The vector identity
(`provider`, `model`, `dims`) is stored with every vector, so a model change
makes the old vectors stale instead of silently comparable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from memverbs.server.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.settings import EmbeddingsSettings

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Characters, not tokens: far below every common model's input limit, so one
# long fact or chunk never fails a whole batch.
MAX_INPUT_CHARS = 8000


class Embedder(Protocol):
    provider: str
    model: str

    @property
    def dims(self) -> int | None:
        """The vector length once known (configured, or seen on the first call)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order; raises ProviderError."""

    def close(self) -> None: ...


def normalise(rows: np.ndarray) -> np.ndarray:
    import numpy as np  # noqa: PLC0415 - numpy only where vectors are handled

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32, copy=False)


class OpenAIEmbeddings:
    """POST {base_url}/embeddings, the API OpenAI, Ollama, LM Studio, vLLM and others share."""

    provider = "openai"

    def __init__(self, settings: EmbeddingsSettings, api_key: str | None, key_hint: str = "") -> None:
        from memverbs.server.providers.http import JsonApi  # noqa: PLC0415 - httpx only when configured

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = settings.model
        self.batch_size = settings.batch_size
        self.requested_dims = settings.dimensions or None
        self._dims = self.requested_dims
        self.api = JsonApi("embeddings", settings.base_url or OPENAI_BASE_URL, headers, settings.timeout_seconds, key_hint)

    @property
    def dims(self) -> int | None:
        return self._dims

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np  # noqa: PLC0415

        parts = [self._batch(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        if not parts:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        return np.vstack(parts)

    def _batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np  # noqa: PLC0415

        payload: dict = {"model": self.model, "input": [t[:MAX_INPUT_CHARS] or " " for t in texts], "encoding_format": "float"}
        if self.requested_dims:
            payload["dimensions"] = self.requested_dims
        body = self.api.post("/embeddings", payload)
        data = body.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            raise self._malformed(f"expected {len(texts)} embeddings, got {len(data) if isinstance(data, list) else 'none'}")
        try:
            ordered = sorted(data, key=lambda d: d.get("index", 0))
            rows = np.asarray([d["embedding"] for d in ordered], dtype=np.float32)
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise self._malformed("the embeddings are not lists of numbers of one length") from exc
        if rows.ndim != 2 or rows.shape[1] == 0 or not np.isfinite(rows).all():
            raise self._malformed("the embeddings are not lists of finite numbers of one length")
        if self._dims is not None and rows.shape[1] != self._dims:
            raise self._malformed(f"asked for {self._dims} dimensions, got {rows.shape[1]}")
        self._dims = rows.shape[1]
        return normalise(rows)

    def _malformed(self, what: str) -> ProviderError:
        return ProviderError(
            "provider_error",
            f"embeddings provider at {self.api.host} answered in an unexpected shape ({what})",
            "Check embeddings.model and embeddings.dimensions (not every model can shorten its vectors).",
        )

    def close(self) -> None:
        self.api.close()
