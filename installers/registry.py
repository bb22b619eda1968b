"""The installer table: one module per harness, keyed by the Harness enum."""

from __future__ import annotations

import importlib
import shutil

from memverbs.hooks.events import Harness

INSTALLABLE = (Harness.CLAUDE, Harness.CODEX, Harness.GROK, Harness.OPENCODE, Harness.OPENCLAW)
COMMANDS = {Harness.CLAUDE: "claude", Harness.CODEX: "codex", Harness.GROK: "grok", Harness.OPENCODE: "opencode", Harness.OPENCLAW: "openclaw"}
SCOPES = {
    Harness.CLAUDE: ("user", "project", "local"),
    Harness.CODEX: ("user",),
    Harness.GROK: ("user", "project"),
    Harness.OPENCODE: ("user", "project"),
    Harness.OPENCLAW: ("user",),
}


def module(harness: Harness):
    return importlib.import_module(f"memverbs.installers.{harness.value}")


def on_path(env_path: str | None = None) -> list[Harness]:
    return [h for h in INSTALLABLE if shutil.which(COMMANDS[h], path=env_path)]
