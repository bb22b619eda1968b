"""Session start and after compaction: rehydrate the agent with a context pack.

Both moments do the same thing — the pack is deterministic — except that after a compaction the
session has banked entities to bring back. What the pack holds is server/readout.py's to decide; here
the hook asks for it (`rehydrate`, through the brain the harness is wired to), or is given the pack a
session start kept while nothing it was chosen from changed (`from_kept`, on the launcher's fast path:
hooks/kept.py). The session's delta cursor is established here too, so the first heartbeat reports
what changed since the session began rather than nothing.

Imports nothing the fast path has not loaded: the rest is imported where a moment needs it.
"""

from __future__ import annotations

import os

from memverbs.server import readout

# Not `typing.TYPE_CHECKING`: the fast path loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memverbs.hooks.adapters import Adapter
    from memverbs.hooks.brain_side import BrainSide
    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.state import SessionState

IN_FLIGHT_LAG_MS = 2000  # server/verbs/delta.py IN_FLIGHT_LAG_MS: a first wake's cursor trails now by it
CURSOR_IDLE_MS = 7 * 24 * 3600 * 1000  # server/brain/cursors_store.py IDLE_MS
CURSORS_PER_LANE = 1000  # server/brain/cursors_store.py KEEP_PER_LANE


def rehydrate(hook: BrainSide, *, waiting: bool = False, keep: str | None = None) -> str:
    """The pack, from `hook` (the local `Hook` or a `RemoteHook`); `waiting`: add the pointers a prompt left
    for this moment (Grok's first PostToolUse); `keep`: the kept-pack key to keep it under (a session start
    on a SQLite brain)."""
    event, state = hook.event, hook.state
    ask = readout.Ask(readout.START, event.session_id, configured=hook.settings.hook_entities, user=hook.settings.hook_user,
                      banked=list(state.entities), project=hook.own_project(), now_ms=hook.now_ms, waiting=waiting,
                      keep=keep is not None)
    out = readout.read_out(hook, ask, state)
    if keep is not None and "kept" in out.aside:
        from memverbs.hooks import kept  # noqa: PLC0415

        kept.save(hook.home_root, keep, out.aside["kept"])
    return out.text


def started(state: SessionState, event: HookEvent, adapter: Adapter, text: str) -> None:
    """What a session start leaves in its session's state, however its pack was had: the pack, for a start
    the harness announces twice (hooks/state.py), and whether the model has seen it (a harness that drops
    start-up output shows it with the first PostToolUse instead)."""
    from memverbs.hooks.events import Moment  # noqa: PLC0415
    from memverbs.hooks.state import collect_idle  # noqa: PLC0415

    collect_idle(os.path.dirname(state.path))
    if event.moment is Moment.SESSION_START and text:
        state.keep_pack(text)
    state.packed = event.moment is Moment.POST_TOOL or adapter.delivers_start


def from_kept(root: str, harness: str, payload: dict, brain: str, source: str, configured: str, user: str,
              busy_ms: int) -> str | None:
    """A session start's whole answer (the harness's output) from a kept pack, or None when the full path
    must build it: no kept pack for this ask, the brain changed since, time moved it on, this session has
    facts of its own or a pack already, or anything in doubt."""
    from memverbs.hooks import kept  # noqa: PLC0415
    from memverbs.hooks.adapters import ADAPTERS  # noqa: PLC0415
    from memverbs.hooks.events import Harness, Moment  # noqa: PLC0415
    from memverbs.hooks.state import SessionState  # noqa: PLC0415
    from memverbs.server.brain.plain import connect  # noqa: PLC0415
    from memverbs.server.context import LOCAL_LANE  # noqa: PLC0415
    from memverbs.server.projects import find_project  # noqa: PLC0415

    adapter = ADAPTERS[Harness(harness)]
    event = adapter.parse(payload, Moment.SESSION_START, None)
    now = _now_ms()
    state = SessionState.load(os.path.join(root, "hooks", "sessions"), event.harness, event.session_id)
    if state.recent_pack(now) is not None:
        return None  # announced twice: the runner gives the same pack again, as it was printed
    project = find_project(event.cwd)
    name = kept.key(brain, source, project.key if project is not None else None, configured, user, state.entities)
    record = kept.load(root, name)
    if record is None:
        return None
    from memverbs.server.brain.plain import PlainBrain  # noqa: PLC0415

    db = connect(brain, busy_ms)
    if db is None:
        return None
    plain = PlainBrain(db)
    try:
        if not kept.good(record, plain.stamp(), now) or plain.session_has_facts(source, event.session_id) is not False:
            return None
        cursor = plain.has_cursor(source, LOCAL_LANE, event.session_id)
        if cursor is None or (not cursor and not plain.first_wake(
                source, LOCAL_LANE, event.session_id, now - IN_FLIGHT_LAG_MS, now, CURSORS_PER_LANE, CURSOR_IDLE_MS)):
            return None
    finally:
        plain.close()
    state.cursor_set = True
    readout.after_pack(state, record)
    started(state, event, adapter, record["text"])
    kept.collect_idle(root)
    state.save()
    return adapter.render(record["text"], event) if record["text"] else ""


def _now_ms() -> int:
    import time  # noqa: PLC0415 - loaded with the interpreter

    return time.time_ns() // 1_000_000
