"""Standing entities: whom a session's context pack is about.

In order, capped at context_pack's 8:
1. the configured ones (`memverbs config set hooks.entities "people/me,projects/x"`);
2. what this session touched — entities of the cards and facts it was already shown,
   banked in its hook state, so after a compaction the pack brings back what the
   summary dropped;
3. what the brain learned about most recently, so a new session on a brain with no
   configuration still starts warm.
The pack's facts arm adds the hot facts either way: a cold brain still gets them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.verbs.shapes import split_entities

if TYPE_CHECKING:
    from collections.abc import Callable

    from memverbs.server.brain.base import Brain

MAX_STANDING = 8


def standing_entities(configured: str, banked: list[str], recent: Callable[[], list[str]] | None = None) -> list[str]:
    """`recent()` (the brain's most recently learned-about slugs) is asked only when room is left."""
    chosen = split_entities(configured, cap=MAX_STANDING)
    for slug in banked:
        if len(chosen) >= MAX_STANDING:
            break
        if slug not in chosen:
            chosen.append(slug)
    if len(chosen) < MAX_STANDING and recent is not None:
        for slug in recent():
            if len(chosen) >= MAX_STANDING:
                break
            if slug not in chosen:
                chosen.append(slug)
    return chosen


def touched(body: dict) -> list[str]:
    """Entity slugs a pack or delta showed: its cards, then its facts' entities."""
    slugs = [c["slug"] for c in body.get("cards", [])]
    slugs += [f["entity_slug"] for f in body.get("facts", []) if f.get("entity_slug")]
    return list(dict.fromkeys(slugs))


def local_standing(brain: Brain, source: str, configured: str, banked: list[str]) -> list[str]:
    """Standing entities on a local brain: configured, banked, then what it learned about recently."""
    return standing_entities(configured, banked, lambda: brain.recent_entity_slugs(source, limit=MAX_STANDING))
