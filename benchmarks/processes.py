"""How a benchmark starts memverbs as a user would: the installed console script beside this
interpreter, else `python -m memverbs`."""

from __future__ import annotations

import sys
from pathlib import Path


def memverbs_cmd() -> list[str]:
    beside = Path(sys.executable).parent / "memverbs"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "memverbs"]
