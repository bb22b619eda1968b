"""The harness table: every harness memverbs can wire, one `HarnessSpec` each (spec.py).

`memverbs install`, `uninstall`, `doctor` and `connect --install` read this tuple; adding a
harness is a new module with its SPEC, a row here, and its hook adapter (docs/architecture.md
has the checklist).
"""

from __future__ import annotations

from memverbs.installers import claude, codex, grok, openclaw, opencode
from memverbs.installers.spec import HarnessSpec

HARNESSES: tuple[HarnessSpec, ...] = (claude.SPEC, codex.SPEC, grok.SPEC, opencode.SPEC, openclaw.SPEC)
BY_NAME: dict[str, HarnessSpec] = {spec.name: spec for spec in HARNESSES}


def on_path(env_path: str | None = None) -> list[HarnessSpec]:
    """The harnesses installed here (their CLI is on PATH): what `all` means."""
    return [spec for spec in HARNESSES if spec.on_path(env_path)]
