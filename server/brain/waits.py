"""What the calls on this thread waited for in the brain: a pooled connection, the write lock.

A Postgres brain notes each wait here as it happens (`postgres_base`); the usage log takes
them with the call's line (`take`), so `memverbs doctor` can say when a server's pool is too
small or its writers queue. Per thread, because a server's worker threads each serve one call
at a time. Stdlib only: the hook path imports the brain seam.
"""

from __future__ import annotations

import threading

_local = threading.local()
KINDS = ("pool_wait_ms", "lock_wait_ms")


def note(kind: str, ms: float) -> None:
    """Add `ms` to this thread's wait of `kind` (one of KINDS)."""
    seen = getattr(_local, "seen", None)
    if seen is None:
        seen = _local.seen = dict.fromkeys(KINDS, 0.0)
    seen[kind] += ms


def take() -> dict[str, int]:
    """This thread's waits since the last take, in whole milliseconds; only the kinds that waited ≥ 1 ms."""
    seen = getattr(_local, "seen", None)
    _local.seen = None
    if not seen:
        return {}
    return {kind: round(ms) for kind, ms in seen.items() if ms >= 1}
