"""Files only their owner reads, written atomically: standard-library `os` alone.

The hooks keep their session state and the parsed config copy with it, and capture its
per-session stamps and checkpoints: a module below both rooms, so neither reaches into the other,
and light enough for a hook's start-up (no `tempfile`, no `pathlib`).
"""

from __future__ import annotations

import os
import time


def write_private(path: str, text: str) -> None:
    """Write `text` atomically, readable by the owner only, making its folder if missing.

    A name only this process uses, opened exclusively: `tempfile` would cost the hook's start-up its
    imports (random, shutil).
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
