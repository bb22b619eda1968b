"""What a moment's code (session start, heartbeat) needs of the brain it runs against.

The runner's local `Hook` and `RemoteHook` both answer it: a `readout.Side` (how the brain is reached:
its verbs, and the pointers' reads where it has them), with the hook's event, settings and session
state. The moments are written against this Protocol, so they import neither the runner nor the
remote client (the runner imports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.state import SessionState
    from memverbs.server.quickconfig import QuickSettings
    from memverbs.server.verbs.pointers import Reads
    from memverbs.server.verbs.readout import Ask


class BrainSide(Protocol):
    """The event, its session state and the brain, local or remote."""

    event: HookEvent
    settings: QuickSettings
    state: SessionState
    now_ms: int
    in_process: bool  # the local brain, through the dispatcher: its verbs read the moment's `Ask`
    source: str

    def call(self, verb: str, params: dict, ask: Ask | None = None) -> tuple[dict, dict]: ...

    # The pointers' reads of this brain; None where they cannot run (a remote brain: the protocol has no
    # name lookup, so its agents pull with `entity` and `recall` instead).
    def reads(self) -> Reads | None: ...

    # The project's own slug where the brain cannot be asked for its registry's (a remote brain); None
    # where the verbs read it themselves.
    def own_project(self) -> str | None: ...
