"""config.toml on disk: read with tomllib, written with tomli-w atomically (temp file + rename)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomli_w

from memverbs.installers.files import atomic_write_through


def read_config(path: Path) -> dict:
    """The file's table; an absent file is empty. Raises tomllib.TOMLDecodeError / OSError as they come."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}


def write_config(path: Path, data: dict) -> None:
    """config.toml holds settings, not secrets, but stays private to its owner (0600) when new."""
    atomic_write_through(path, tomli_w.dumps(data), default_mode=0o600)
