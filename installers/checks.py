"""What a harness's doctor check is made of: a result row, the fix that reinstalls, and whether the
command our server entry spawns still exists.

Apart from health.py, which runs the checks over the harness table, so a harness module can use
these without importing the table that lists it.
"""

from __future__ import annotations

import os

from memverbs.hooks.events import Harness
from memverbs.installers.spec import Problem


def check(name: str, status: str, detail: str, fix: str | None = None) -> dict:
    return {"name": name, "status": status, "detail": detail, "fix": fix}


def reinstall(harness: Harness) -> str:
    return f"Run `memverbs install {harness.value}` again (it repairs its own entries and nothing else)."


def command_exists(harness: Harness, entry: object) -> list[Problem]:
    """The executable our server entry spawns must exist (a moved venv breaks every session's tools)."""
    command = None
    if isinstance(entry, dict):
        command = entry.get("command")
        if isinstance(command, list):
            command = command[0] if command else None
    if isinstance(command, str) and os.path.isabs(command) and not os.access(command, os.X_OK):
        return [(f"the server command {command} does not exist any more", reinstall(harness))]
    return []
