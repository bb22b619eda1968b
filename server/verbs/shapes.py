"""Row → wire object conversions shared by several verbs (key order is the contract's)."""

from __future__ import annotations

from memverbs.server.timeparse import iso

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row


def recall_fact(r: Row) -> dict:
    """recall's fact object: the legacy fields first, then v1's fact_id and provenance."""
    return {
        "id": r["id"],
        "fact": r["fact"],
        "kind": r["kind"],
        "entity_slug": r["entity_slug"],
        "visibility": r["visibility"],
        "notability": r["notability"],
        "valid_from": iso(r["valid_from"]),
        "valid_until": iso(r["valid_until"]),
        "expired_at": iso(r["expired_at"]),
        "superseded_by": r["superseded_by"],
        "consolidated_at": iso(r["consolidated_at"]),
        "consolidated_into": r["consolidated_into"],
        "source": r["provenance"],
        "source_session": r["source_session"],
        "context": r["context"],
        "confidence": r["confidence"],
        "created_at": iso(r["created_at"]),
        "fact_id": str(r["id"]),
        "provenance": r["provenance"],
    }


def brief_fact(r: Row, confidence: float) -> dict:
    """context_pack / delta fact: no id on purpose (packs are injected, not acted on)."""
    return {
        "fact": r["fact"],
        "kind": r["kind"],
        "entity_slug": r["entity_slug"],
        "valid_from": iso(r["valid_from"]),
        "context": r["context"],
        "confidence": confidence,
    }


def split_entities(raw: str | None, cap: int = 8) -> list[str]:
    if not raw:
        return []
    names = [part.strip() for part in raw.split(",")]
    return [n for n in names if n][:cap]
