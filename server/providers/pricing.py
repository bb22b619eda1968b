"""What a synthesize call cost: tokens as reported times a per-model price, or null when unknown.

The table is a best-effort snapshot (USD per million tokens, input/output) of
public list prices; `llm.price_input_per_mtok` / `llm.price_output_per_mtok`
override it for the configured model. A model is matched by its longest known
prefix, so dated ids (`claude-sonnet-4-5-20250929`) find their family. Local
models (Ollama and friends) are not listed: their cost is unknown, not zero.
"""

from __future__ import annotations

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5": (1.25, 10.0),
}


def price_for(model: str, override_in: float | None = None, override_out: float | None = None) -> tuple[float, float] | None:
    if override_in is not None and override_out is not None:
        return override_in, override_out
    key = model.strip().lower()
    best = max((p for p in PRICES_PER_MTOK if key.startswith(p)), key=len, default=None)
    if best is None:
        return None
    base_in, base_out = PRICES_PER_MTOK[best]
    return (override_in if override_in is not None else base_in, override_out if override_out is not None else base_out)


def usd_estimate(price: tuple[float, float] | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1e6, 6)
