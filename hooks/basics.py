"""What every hook module may use: stdlib only, and no other hook module imported, so any of them can.

An owner-only atomic write (the session state, the parsed config copy, capture's stamps), the
user's prompt in a payload, and the reflex's switch.
"""

from __future__ import annotations

import os
import time

OFF = {"off", "0", "false", "no", "disabled"}


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


def prompt_of(payload: dict) -> str:
    """The user's prompt in a prompt hook's payload: `prompt` (Claude Code, Codex, Grok, and our opencode
    and OpenClaw plugins), "" when there is none. Read for the reflex, never kept."""
    value = payload.get("prompt")
    return value if isinstance(value, str) else ""


def reflex_on(setting: object) -> bool:
    """The per-prompt reflex (hooks/reflex.py) runs unless `MEMVERBS_REFLEX=off` or the `hooks.reflex`
    setting (`false`, `off`, …) turns it off."""
    return os.environ.get("MEMVERBS_REFLEX", "").strip().lower() not in OFF and str(setting).strip().lower() not in OFF
