"""Hot memory: the facts a context pack carries.

memverbs ranks facts about the requested entities first, then facts recorded in
the caller's session, then what the whole brain learned in the last 24 hours
(PROTOCOL.md B7), each group ordered by decayed confidence. Decay is
`confidence × exp(−age_days / half_life)` with a half-life per kind.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from memverbs.server.context import VerbContext
from memverbs.server.verbs.shapes import brief_fact

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

HOT_CAP = 10
RECENT_WINDOW_MS = 24 * 3600 * 1000
HALF_LIFE_DAYS = {"event": 7, "commitment": 90, "preference": 90, "belief": 365, "fact": 365}
_DAY_MS = 86_400_000


def decayed(row: Row, now: int) -> float:
    if row["expired_at"] is not None or (row["valid_until"] is not None and row["valid_until"] <= now):
        return 0.0
    age_days = max(0, now - row["valid_from"]) / _DAY_MS
    value = row["confidence"] * math.exp(-age_days / HALF_LIFE_DAYS.get(row["kind"], 365))
    return min(1.0, max(0.0, value))


def hot_facts(
    ctx: VerbContext, entity_slugs: list[str], session_id: str | None, *, world_only: bool, now: int
) -> list[dict]:
    brain, source = ctx.brain, ctx.source
    groups = [brain.entity_facts(source, entity_slugs, world_only=world_only, now=now, limit=HOT_CAP)]
    if session_id:
        groups.append(brain.session_facts(source, session_id, world_only=world_only, now=now, limit=HOT_CAP))
    groups.append(brain.recent_facts(source, now - RECENT_WINDOW_MS, world_only=world_only, now=now, limit=HOT_CAP))
    picked: list[dict] = []
    seen: set[int] = set()
    for rows in groups:
        ranked = sorted(rows, key=lambda r: (-decayed(r, now), -r["id"]))
        for r in ranked:
            if len(picked) >= HOT_CAP:
                return picked
            if r["id"] in seen:
                continue
            seen.add(r["id"])
            picked.append(brief_fact(r, round(decayed(r, now), 3)))
    return picked
