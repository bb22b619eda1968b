"""Writing a harness's files: atomically, keeping the mode, with a backup first.

A config file is written through a temp file in the same directory and an
os.replace, so a crash leaves either the old file or the new one, never half
of each; the new file keeps the old one's permissions. Before the first change
of a run, the old bytes are copied under `$MEMVERBS_HOME/backups/<harness>/`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def atomic_write(path: Path, text: str, *, default_mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = default_mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".memverbs-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def backup(path: Path, backups: Path) -> Path | None:
    """Copy `path` (if it exists) to a timestamped backup; returns where."""
    if not path.exists():
        return None
    backups.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    dest = backups / f"{path.name}.{stamp}.bak"
    n = 1
    while dest.exists():
        dest = backups / f"{path.name}.{stamp}.{n}.bak"
        n += 1
    shutil.copy2(path, dest)
    return dest
