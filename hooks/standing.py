"""Standing entities: whom a session's context pack is about.

In order, capped at context_pack's 8:
1. the configured ones (`memverbs config set hooks.entities "people/me,projects/x"`);
2. in a project (server/projects.py, from the payload's cwd): the project's entity and what hangs
   off it, the entities most of its facts are about and its page's links (up to MAX_LINKED);
3. what this session touched — entities of the cards and facts it was already shown,
   banked in its hook state, so after a compaction the pack brings back what the
   summary dropped;
4. the user's own entity (`hooks.user`, default `people/me`);
5. outside a project only: what the brain learned about most recently, so a new session on a
   brain with no configuration still starts warm. In a project that would be any repository's
   news; the project's own facts lead the pack's facts arm instead.
The pack's facts arm adds the hot facts either way: a cold brain still gets them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.verbs.shapes import split_entities

if TYPE_CHECKING:
    from collections.abc import Callable

    from memverbs.server.brain.base import Brain

MAX_STANDING = 8
MAX_LINKED = 3  # a project's people and components: room stays for the session's own and the user


def standing_entities(configured: str, banked: list[str], recent: Callable[[], list[str]] | None = None, *,
                      project: list[str] | None = None, user: str = "") -> list[str]:
    """`project`: the project's slug and its linked entities; `recent()` (the brain's most recently
    learned-about slugs) is asked only outside a project, and only when room is left."""
    chosen = split_entities(configured, cap=MAX_STANDING)
    ahead = [s for s in dict.fromkeys(project or []) if s not in chosen]
    user_slugs = [s for s in split_entities(user, cap=1) if s not in chosen and s not in ahead]
    # The session's banked entities fill what the user's own entity leaves: it keeps its place.
    room = MAX_STANDING - len(chosen) - len(ahead) - len(user_slugs)
    taken = {*chosen, *ahead, *user_slugs}
    kept = [s for s in dict.fromkeys(banked) if s and s not in taken][: max(0, room)]
    chosen = [*chosen, *ahead, *kept, *user_slugs][:MAX_STANDING]
    if project is None and len(chosen) < MAX_STANDING and recent is not None:
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


def project_standing(brain: Brain, source: str, slug: str) -> list[str]:
    """The project's entity, then what hangs off it: the entities most of its facts are about, then
    its page's links (world-visible pages only: the pack is world-only)."""
    linked = brain.project_entity_slugs(source, slug, limit=MAX_LINKED)
    if len(linked) < MAX_LINKED:
        edges = brain.edges_out(source, slug, MAX_LINKED, allow_private=False, private_rows=False)
        edges += brain.edges_in(source, slug, MAX_LINKED, allow_private=False, private_rows=False)
        linked += [e["slug"] for e in edges]
    return [slug, *[s for s in dict.fromkeys(linked) if s != slug][:MAX_LINKED]]


def local_standing(brain: Brain, source: str, configured: str, banked: list[str], *, project_slug: str | None = None,
                   user: str = "") -> list[str]:
    """Standing entities on a local brain: configured, the project's, banked, the user's, then (outside a
    project) what it learned about recently."""
    project = project_standing(brain, source, project_slug) if project_slug else None
    return standing_entities(configured, banked, lambda: brain.recent_entity_slugs(source, limit=MAX_STANDING),
                             project=project, user=user)
