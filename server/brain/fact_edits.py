"""Restoring a forgotten fact and changing one fact's visibility: the rules every backend applies,
and a fact's history as those edits leave it (`trail_events`: what `memverbs history` and the
inspector show).

These are edits by the trusted local caller only (`memverbs restore-fact`, `memverbs
fact-visibility`, the inspector); no MCP tool reaches them. Each backend reads the fact and
what the rules need inside its write transaction, asks `restore_refusal` / `visibility_refusal`,
and on a yes changes the row and writes one `fact_audit` row (who, when, why; a restore also
keeps the expiry it undid), so the audit trail only ever grows.

The rules (docs/ui.md, "Restoring and visibility"):
* only a forgotten fact is restored: not an active one, not one whose ttl has passed, not one a
  newer fact superseded (both active would contradict each other), not one an active fact already
  restates, and not one filed under a page that was deleted;
* widening to world needs explicit intent (`widen=True`); narrowing to private never does;
* a fact is not given a visibility in which an active fact already says the same about the same
  entity: as remember, the brain keeps one active copy per visibility;
* only a fact's owner changes its visibility: a teammate's world fact is the team's to forget, not
  to take private.
"""

from __future__ import annotations

from memverbs.server.brain.base import Row
from memverbs.server.errors import FactEditRefused
from memverbs.server.timeparse import iso

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import Any

VISIBILITIES = ("world", "private")


def parse_fact_ref(raw: str) -> int | None:
    """A fact id as a person types it (`42` or `#42`), or None: only ids a fact can have."""
    text = str(raw).strip().removeprefix("#")
    if not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if 0 < value < 2**63 else None


def local_actor(via: str) -> str:
    """Who made an edit, as the audit row keeps it: the command or view, and the OS user."""
    import getpass  # noqa: PLC0415 - only an edit needs it

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name in a bare container: the edit is still recorded
        user = "unknown"
    return f"{via} (user {user})"


def not_found(fact_id: int) -> FactEditRefused:
    return FactEditRefused(
        "not_found", f"no fact #{fact_id}", "List facts with `memverbs recall --include-expired` (the ids are the #N)."
    )


def restore_refusal(
    fact_id: int, row: Row | None, *, now: int, page_deleted: bool, restated_by: int | None
) -> FactEditRefused | None:
    """Why `row` (the fact, None if missing) cannot be restored, or None when it can.

    `page_deleted`: its entity's page exists only as deleted; `restated_by`: the id of an active
    fact with the same text, entity and visibility, if there is one.
    """
    if row is None:
        return not_found(fact_id)
    lapsed = row["valid_until"] is not None and row["valid_until"] <= now
    if row["expired_at"] is None:
        if lapsed:
            return FactEditRefused(
                "lapsed",
                f"fact #{fact_id} was never forgotten: its ttl ended at {iso(row['valid_until'])}",
                "A lapsed fact is not brought back by restoring; remember it again with a new ttl if it holds again.",
            )
        return FactEditRefused(
            "not_forgotten",
            f"fact #{fact_id} is active: there is nothing to restore",
            "It already shows in `memverbs recall`; check the id with `memverbs recall --include-expired`.",
        )
    if row["superseded_by"] is not None:
        return FactEditRefused(
            "superseded",
            f"fact #{fact_id} was superseded by fact #{row['superseded_by']}; restoring it would leave two active "
            "facts that contradict each other",
            f"If the old fact holds again, remember it anew (`memverbs remember`), which supersedes the newer one "
            f"with the trail intact; see `memverbs history {row['superseded_by']}`.",
        )
    if lapsed:
        return FactEditRefused(
            "lapsed",
            f"fact #{fact_id} would still be inactive: its ttl ended at {iso(row['valid_until'])}",
            "Remember it again with a new ttl if it holds again.",
        )
    if page_deleted:
        return FactEditRefused(
            "entity_gone",
            f"fact #{fact_id} is filed under {row['entity_slug']}, whose page was deleted; restoring it would bring back "
            "a fact about an entity that is gone",
            f"Write the page again first (`memverbs put-page {row['entity_slug']} FILE`), or refile the facts under "
            f"a live entity (`memverbs move-facts {row['entity_slug']} OTHER`), then restore.",
        )
    if restated_by is not None:
        return FactEditRefused(
            "duplicate",
            f"fact #{fact_id} says what active fact #{restated_by} already says about {row['entity_slug']}",
            f"Nothing to restore: fact #{restated_by} holds it (forget that one first if you want this id back).",
        )
    return None


def visibility_refusal(
    fact_id: int, current: str | None, visibility: str, *, widen: bool, restated_by: int | None = None,
    owner: int | None = None,
) -> FactEditRefused | None:
    """Why the fact (now `current`, None if missing) cannot be made `visibility`, or None when it
    can (or already is).

    `restated_by`: the id of another active fact with the same text and entity that already has
    `visibility`, when this fact is active; `owner`: the person whose fact it is, when that is not the
    call's person (then only they may change it). remember keeps one active copy per visibility; the
    change would make two, so it is refused (nothing is merged or expired behind the owner's back).
    """
    if visibility not in VISIBILITIES:
        return FactEditRefused("invalid_visibility", f'"{visibility}" is not a visibility', "Pass world or private.")
    if current is None:
        return not_found(fact_id)
    if owner is not None and current != visibility:
        return FactEditRefused(
            "not_yours",
            f"fact #{fact_id} is another person's (person {owner}): only a fact's owner changes its visibility",
            f"Forget it if it is wrong for the team (`memverbs forget {fact_id}`), or remember your own private "
            "fact alongside it.",
        )
    if restated_by is not None and current != visibility:
        return FactEditRefused(
            "duplicate",
            f"fact #{fact_id} says what active {visibility} fact #{restated_by} already says; making it {visibility} "
            f"would leave two identical active {visibility} facts",
            f"Keep one: forget this one if #{restated_by} is the copy you want (`memverbs forget {fact_id}`), or forget "
            f"#{restated_by} first and change this one.",
        )
    if visibility == "world" and current != "world" and not widen:
        return FactEditRefused(
            "needs_intent",
            f"making fact #{fact_id} world would show it to every MCP caller (every harness, every remote token)",
            f"Say so explicitly: `memverbs fact-visibility {fact_id} world --widen` (the inspector asks you to confirm).",
        )
    return None


def trail_events(row: Row, trail: dict[str, Any], now: int) -> list[tuple[int, str, str]]:
    """A fact's history as (epoch ms, event, detail), oldest first: what `history` and the inspector show.

    A restore clears the fact's expiry; the audit row kept it, so the trail shows both."""
    events = [(row["created_at"], "remembered", f"{row['fact']} — {row['provenance']}")]
    events += [(old["expired_at"], "superseded", f"fact #{old['id']}: {old['fact']}") for old in trail["supersedes"]]
    for m in trail["moves"]:
        why = f" ({m['reason']})" if m["reason"] else ""
        events.append((m["moved_at"], "moved", f"{m['from_slug'] or '(none)'} → {m['to_slug']}{why}"))
    for a in trail.get("audit", ()):
        if a["action"] == "restored":
            events.append((a["old_at"], "expired", a["old_value"] or ""))
            events.append((a["at"], "restored", f"{a['reason']} — {a['actor']}"))
        else:
            events.append((a["at"], "visibility", f"{a['old_value']} → {a['new_value']}: {a['reason']} — {a['actor']}"))
    if row["expired_at"] is not None:
        events.append((row["expired_at"], "expired", row["expiry_reason"] or ""))
    elif row["valid_until"] is not None:
        events.append((row["valid_until"], "lapsed" if row["valid_until"] <= now else "expires", "ttl"))
    return sorted(events, key=lambda e: e[0] or 0)
