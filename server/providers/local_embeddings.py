"""An embedding provider that runs on this machine's CPU, with no key, no server and no download.

`embeddings.provider = "local"` embeds with a static model a PyPI package ships inside
itself: WordLlama's `l2_supercat` (token embeddings distilled from Llama 2's, 256
dimensions stored, 16 MB; the `wordllama` package, MIT). A text's vector is the mean of its
tokens' vectors, normalised: about 40 µs a query, no GPU, and the model is read from the
installed package only, so nothing is fetched at run time or in tests
(`pip install 'memverbs[local]'`). `embeddings.model` names the model as `wordllama/<config>`,
`embeddings.dimensions` may shorten its vectors (Matryoshka-trained: 64, 128 or 256).

WordLlama's own loader looks for the shipped tokenizer under a folder name the package does
not use, and then downloads; this provider opens the shipped files itself and hands them to
WordLlama's inference class, so that path is never taken.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memverbs.server.errors import ProviderError
from memverbs.server.providers.embeddings import MAX_INPUT_CHARS, normalise

if TYPE_CHECKING:
    import numpy as np

    from memverbs.server.settings import EmbeddingsSettings

DEFAULT_MODEL = "wordllama/l2_supercat"
NATIVE_DIMS = 256
INSTALL = "Install the local model: pip install 'memverbs[local]' (the wordllama package ships it)."


def shipped_files(config: str) -> tuple[Path, Path]:
    """(weights, tokenizer) a `wordllama` install ships for this config; ProviderError when absent."""
    try:
        import wordllama  # noqa: PLC0415 - an optional extra
    except ImportError as exc:
        raise ProviderError("model_unusable", "the local embedding model is not installed (no wordllama package)", INSTALL) from exc
    root = Path(wordllama.__file__).parent
    weights = root / "weights" / f"{config}_{NATIVE_DIMS}.safetensors"
    tokenizer = root / "tokenizers" / f"{config}_tokenizer_config.json"
    if not weights.is_file() or not tokenizer.is_file():
        raise ProviderError(
            "model_unusable",
            f"the wordllama package has no shipped model {config!r} (looked for {weights.name} and {tokenizer.name})",
            f"Set embeddings.model to {DEFAULT_MODEL!r}, the model the package ships.",
        )
    return weights, tokenizer


class _Inference(Protocol):
    """What this provider uses of WordLlama's inference class."""

    def embed(self, texts: list[str], norm: bool = False) -> np.ndarray: ...


class LocalEmbeddings:
    provider = "local"

    def __init__(self, settings: EmbeddingsSettings) -> None:
        self.model = settings.model.strip() or DEFAULT_MODEL
        self._dims = settings.dimensions or NATIVE_DIMS
        self._inference: _Inference | None = None  # loaded by the first call: reading 16 MB is not for start-up

    @property
    def dims(self) -> int | None:
        return self._dims

    def _load(self) -> _Inference:
        if self._inference is None:
            family, _, config = self.model.partition("/")
            if family != "wordllama" or not config:
                raise ProviderError("model_unusable", f"unknown local embedding model {self.model!r}",
                                    f"Set embeddings.model to {DEFAULT_MODEL!r}.")
            if not 0 < self._dims <= NATIVE_DIMS:
                raise ProviderError("model_unusable", f"{self.model} has {NATIVE_DIMS} dimensions, asked for {self._dims}",
                                    f"Set embeddings.dimensions to 0 (all {NATIVE_DIMS}) or fewer.")
            weights, tokenizer = shipped_files(config)
            from safetensors import safe_open  # noqa: PLC0415
            from wordllama import WordLlama  # noqa: PLC0415
            from wordllama.inference import WordLlamaInference  # noqa: PLC0415

            with safe_open(str(weights), framework="np", device="cpu") as fh:
                table = fh.get_tensor("embedding.weight")[:, : self._dims]
            inference: _Inference = WordLlamaInference(table, WordLlama.load_tokenizer(tokenizer))
            self._inference = inference
        return self._inference

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np  # noqa: PLC0415

        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        rows = self._load().embed([t[:MAX_INPUT_CHARS] or " " for t in texts], norm=False)
        return normalise(np.asarray(rows, dtype=np.float32))

    def close(self) -> None:
        self._inference = None
