"""Writing a harness's files: atomically, keeping the mode, with a backup first.

A config file is written through a temp file in the same directory and an
os.replace, so a crash leaves either the old file or the new one, never half
of each; the new file keeps the old one's permissions. Before the first change
of a run, the old bytes are copied under `$MEMVERBS_HOME/backups/<harness>/`.

Line endings and a UTF-8 byte-order mark are the user's too: files are read and
written without newline translation (a CRLF file stays CRLF; the editors insert
in the file's own ending, see `newline_of`), and a file that starts with a BOM
is read without it and written back with it.

A config that is a symlink (dotfiles kept in a repository) is written *through*:
the link stays a link and its target gets the new bytes. What memverbs must not
guess about is refused before anything is written, with a fix: a dangling link,
a directory, a file it cannot read or that is not UTF-8 text.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from memverbs.server.errors import MemverbsError
from memverbs.server.files import write_through

BOM = "\ufeff"


class InstallError(MemverbsError):
    """A step cannot be applied safely; `fix` says what the user can do. Nothing was written."""


def read_text(path: Path) -> str | None:
    """The file's text as it is on disk (no newline translation), without a leading BOM;
    None when there is no file (and no link) at `path`."""
    if path.is_symlink() and not path.exists():
        target = os.readlink(path)
        raise InstallError(
            f"{path} is a symlink to {target}, which does not exist; memverbs left it untouched",
            f"Create {target} (an empty file will do) or remove the link, then install again.",
        )
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise InstallError(
            f"{path} is a directory, where a config file belongs; memverbs left it untouched",
            f"Move {path} aside (or remove it if it is empty), then install again.",
        ) from exc
    except PermissionError as exc:
        raise InstallError(
            f"cannot read {path} (permission denied); memverbs left it untouched",
            f"Give your user read and write access (chmod u+rw {path}), or install as the user who owns it.",
        ) from exc
    except UnicodeDecodeError as exc:
        raise InstallError(
            f"{path} is not UTF-8 text; memverbs left it untouched",
            f"Save {path} as UTF-8 (or move it aside), then install again.",
        ) from exc
    except OSError as exc:
        raise InstallError(f"cannot read {path} ({exc.strerror}); memverbs left it untouched", f"Check {path}, then install again.") from exc


def real_path(path: Path) -> Path:
    """Where writes to `path` land: the file a symlink (or a chain of them) points at."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def newline_of(text: str | None) -> str:
    """The line ending `text` uses (that of its first line), "\n" when it has none."""
    text = text or ""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _has_bom(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(3) == BOM.encode("utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return False


def atomic_write_through(path: Path, text: str, *, default_mode: int = 0o644) -> None:
    """Write `text` to `path` atomically, through a symlink: the link's target is replaced, the link stays
    (server/files.py's `write_through`; folder sync and export use `replace_inside`, which never follows one)."""
    target = real_path(path)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = default_mode
    if _has_bom(target) and not text.startswith(BOM):
        text = BOM + text  # read_text dropped it; the file gets it back
    write_through(path, text.encode("utf-8"), mode=mode)


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
