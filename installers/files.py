"""Writing a harness's files: atomically, keeping the mode, with a backup first.

A config file is written through a temp file in the same directory and an
os.replace, so a crash leaves either the old file or the new one, never half
of each; the new file keeps the old one's permissions. Before the first change
of a run, the old bytes are copied under `$MEMVERBS_HOME/backups/<harness>/`.

Line endings and a UTF-8 byte-order mark are the user's too: files are read and
written without newline translation (a CRLF file stays CRLF; the editors insert
in the file's own ending, see `newline_of`), and a file that starts with a BOM
is read without it and written back with it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path


BOM = "\ufeff"


def read_text(path: Path) -> str | None:
    """The file's text as it is on disk (no newline translation), without a leading BOM."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def newline_of(text: str | None) -> str:
    """The line ending `text` uses (that of its first line), "\n" when it has none."""
    i = (text or "").find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _has_bom(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(3) == BOM.encode("utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return False


def atomic_write(path: Path, text: str, *, default_mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = default_mode
    if _has_bom(path) and not text.startswith(BOM):
        text = BOM + text  # read_text dropped it; the file gets it back
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".memverbs-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
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
