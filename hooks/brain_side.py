"""What a moment's code (session start, heartbeat) asks of the brain it runs against.

The runner's local `Hook` and `RemoteHook` both answer it; the moments are written against this
Protocol, so they import neither the runner nor the remote client (the runner imports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.reflex import Reads
    from memverbs.hooks.state import SessionState
    from memverbs.server.quickconfig import QuickSettings


class BrainSide(Protocol):
    """The event, its session state and the calls a moment makes, on a local or a remote brain."""

    event: HookEvent
    settings: QuickSettings
    state: SessionState
    now_ms: int

    def call(self, verb: str, params: dict) -> dict: ...

    def standing(self) -> list[str]: ...

    def project_slug(self) -> str | None: ...

    def has_cursor(self) -> bool: ...

    def page_stamps(self, cards: list[dict]) -> list[dict]: ...

    # The reflex's reads of this brain (hooks/reflex.py); None where it cannot run (a remote brain:
    # the protocol has no name lookup, so its agents pull with `entity` and `recall` instead).
    def reads(self) -> Reads | None: ...
