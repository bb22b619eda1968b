"""context_pack: cards + open threads + hot facts for session boundaries. Zero LLM.

What the pack holds is decided in server/verbs/readout.py (the one home of what the model reads); this
module is the verb's face: its parameters.
"""

from __future__ import annotations

from memverbs.server.context import VerbContext
from memverbs.server.errors import invalid
from memverbs.server.timeparse import parse_when
from memverbs.server.verbs import readout

SINCE_SUGGESTION = 'Pass an ISO 8601 datetime, e.g. since: "2026-08-11T00:00:00Z", or a time ago such as "30d" or "24h".'


def parse_window_since(verb: str, raw: str | None) -> int | None:
    """`since` as ISO 8601, or as the CLI's `--since` takes it ("30d", "-7d", "2w", "yesterday"): a
    leniency on the wire (docs/protocol.md Part B), read by the one parser both use."""
    if raw is None or not raw.strip():
        return None
    at = parse_when(raw)
    if at is None:
        raise invalid(f'{verb}: since is not a parseable timestamp: "{raw[:60]}"', SINCE_SUGGESTION)
    return at


def context_pack(ctx: VerbContext, params: dict) -> dict:
    return readout.pack(ctx, params, since=parse_window_since("context_pack", params.get("since")))
