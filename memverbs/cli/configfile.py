"""config.toml on disk: read with tomllib, written with tomli-w atomically (temp file + rename)."""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

import tomli_w


def read_config(path: Path) -> dict:
    """The file's table; an absent file is empty. Raises tomllib.TOMLDecodeError / OSError as they come."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}


def write_config(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            tomli_w.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
