"""Hot memory: which facts a pack carries (server/verbs/readout.py's `pack` asks it, and nothing else does).

Facts about the requested entities first, then facts recorded in the caller's session, then what
the whole brain learned in the last 24 hours (PROTOCOL.md B7), each group ordered by decayed
confidence: `confidence × exp(−age_days / half_life)` with a half-life per kind.

In a project (server/projects.py) the project's own facts lead (remembered in it or about its
entity; open commitments first), and another project's material is left out unless the caller
asked for its entity: facts remembered in another project, and facts about another project's
entity. What a session needs is its own repository's memory and the user's; the rest of the brain
is one `recall` away.

Two shares keep one kind of fact from taking every place:
* What the user said gets the first USER_SHARE places: their preferences (standing rules: "use uv,
  never pip", "PRs under 300 lines") and the statements capture took from their own words
  (`_the_users`). A rule stated once holds until it is replaced, so a preference decays no faster
  than a plain fact (365 days), and a project's statements are read by themselves
  (`project_statements`), however many commits were captured since.
* Events (captured commits, releases) take at most EVENTS_SHARE places while anything else waits: a
  busy day of commits must not push out what was said and decided. Places nothing else wants still
  go to them.
"""

from __future__ import annotations

import math

from memverbs.server.record import Record

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row
    from memverbs.server.context import VerbContext

HOT_CAP = 10
USER_SHARE = 5  # of HOT_CAP (half): the user's standing rules, preferences and own statements
EVENTS_SHARE = 3  # of HOT_CAP, while other facts wait
RECENT_WINDOW_MS = 24 * 3600 * 1000
# A preference is a standing rule: it holds until replaced, so it fades no faster than a plain fact.
HALF_LIFE_DAYS = {"event": 7, "commitment": 90, "preference": 365, "belief": 365, "fact": 365}
DAY_MS = 86_400_000
_PROJECT_FETCH = 3 * HOT_CAP  # what a project's filter may drop, fetched up front
# Capture's provenance (server/capture/engine.py): `capture:<harness> session <id>`, and `, proposed by
# <model>` for what its optional LLM pass suggested rather than what the user said.
_CAPTURED = "capture:"
_PROPOSED = ", proposed by "


def decayed(row: Row, now: int) -> float:
    if row["expired_at"] is not None or (row["valid_until"] is not None and row["valid_until"] <= now):
        return 0.0
    age_days = max(0, now - row["valid_from"]) / DAY_MS
    value = row["confidence"] * math.exp(-age_days / HALF_LIFE_DAYS.get(row["kind"], 365))
    return min(1.0, max(0.0, value))


class Arms(Record):
    """The pack's fact arms as read: the project's own (None outside a project), the asked entities', the
    session's and the brain's last 24 hours."""

    __slots__ = ("entities", "own", "recent", "session")
    own: list[Row] | None
    entities: list[Row]
    session: list[Row]
    recent: list[Row]

    def __init__(self, own: list[Row] | None, entities: list[Row], session: list[Row], recent: list[Row]) -> None:
        super().__init__(own=own, entities=entities, session=session, recent=recent)


def fact_arms(ctx: VerbContext, entity_slugs: list[str], session_id: str | None, *, world_only: bool, now: int,
              project: str | None) -> Arms:
    brain, source = ctx.brain, ctx.source
    fetch = HOT_CAP if project is None else _PROJECT_FETCH
    own = None
    if project is not None:
        own = brain.project_statements(source, project, world_only=world_only, now=now, limit=fetch)
        own += brain.project_facts(source, project, world_only=world_only, now=now, limit=fetch)
        own += brain.entity_facts(source, [project], world_only=world_only, now=now, limit=fetch)
    # The project's own facts are the arm above: asked again here, its newest would take every place the
    # other entities' (the user's own among them) could have.
    others = [s for s in entity_slugs if s != project]
    return Arms(
        own,
        brain.entity_facts(source, others, world_only=world_only, now=now, limit=fetch),
        brain.session_facts(source, session_id, world_only=world_only, now=now, limit=fetch) if session_id else [],
        brain.recent_facts(source, now - RECENT_WINDOW_MS, world_only=world_only, now=now, limit=fetch),
    )


def hot_facts(arms: Arms, entity_slugs: list[str], *, now: int, project: str | None = None,
              threaded: frozenset[str] = frozenset()) -> list[dict]:
    """The pack's facts, at most HOT_CAP. `threaded`: commitments the pack's cards already list as open
    threads; in a project they take no place of the 10 (the project's commitments would otherwise crowd
    out the user's own facts)."""
    from memverbs.server.verbs.shapes import brief_fact  # noqa: PLC0415

    def by_decay(r: Row) -> tuple:
        return -decayed(r, now), -r["id"]

    groups: list[list[Row]] = []
    if arms.own is not None:
        # Open commitments first: they are what a session in this repository must not drop.
        groups.append(sorted(arms.own, key=lambda r: (r["kind"] != "commitment", *by_decay(r))))
    groups += [sorted(rows, key=by_decay) for rows in (arms.entities, arms.session, arms.recent)]
    asked = set(entity_slugs)
    ranked = [r for rows in groups for r in rows]
    candidates = [r for r in {r["id"]: r for r in ranked}.values()
                  if not (project is not None and (_elsewhere(r, project, asked) or r["fact"] in threaded))]

    picked: dict[int, Row] = {}
    users = sorted((r for r in candidates if _the_users(r)), key=by_decay)
    for r in users[:USER_SHARE]:
        picked[r["id"]] = r
    events = 0
    for r in candidates:  # in the groups' order
        if len(picked) >= HOT_CAP:
            break
        if r["id"] in picked or (r["kind"] == "event" and events >= EVENTS_SHARE):
            continue
        events += r["kind"] == "event"
        picked[r["id"]] = r
    for r in candidates:  # the events that waited, where nothing else wants the place
        if len(picked) >= HOT_CAP:
            break
        picked.setdefault(r["id"], r)
    return [brief_fact(r, round(decayed(r, now), 3)) for r in picked.values()]


def _the_users(row: Row) -> bool:
    """What the user said: a preference (a standing rule, whoever wrote it down), or a statement capture
    took from their own words (not an event it saw, nor what its LLM pass proposed)."""
    if row["kind"] == "preference":
        return True
    said = row["provenance"] or ""
    return row["kind"] != "event" and said.startswith(_CAPTURED) and _PROPOSED not in said


def _elsewhere(row: Row, project: str, asked: set[str]) -> bool:
    """Another project's material, not linked to this one: remembered in another project (unless it is
    about this one), or about another project's entity that was not asked for."""
    from memverbs.server.projects import PROJECT_PREFIX  # noqa: PLC0415

    entity = row["entity_slug"]
    if entity == project:
        return False
    if row["project"] not in (None, project):
        return True
    return bool(entity) and entity.startswith(PROJECT_PREFIX) and entity not in asked
