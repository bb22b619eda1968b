"""What every hook module may use: stdlib only, and no other hook module imported, so any of them can.

The user's prompt in a payload, and the reflex's switch. (An owner-only atomic write, which capture
shares, is `server/private_files.py`.)
"""

from __future__ import annotations

import os

OFF = {"off", "0", "false", "no", "disabled"}


def prompt_of(payload: dict) -> str:
    """The user's prompt in a prompt hook's payload: `prompt` (Claude Code, Codex, Grok, and our opencode
    and OpenClaw plugins), "" when there is none. Read for the reflex, never kept."""
    value = payload.get("prompt")
    return value if isinstance(value, str) else ""


def reflex_on(setting: object) -> bool:
    """The per-prompt reflex (hooks/reflex.py) runs unless `MEMVERBS_REFLEX=off` or the `hooks.reflex`
    setting (`false`, `off`, …) turns it off."""
    return os.environ.get("MEMVERBS_REFLEX", "").strip().lower() not in OFF and str(setting).strip().lower() not in OFF
