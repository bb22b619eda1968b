"""forget: expire a fact by id, with an audit reason. Never deletes; idempotent."""

from __future__ import annotations

import math

from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, VerbError
from memverbs.server.timeparse import now_ms

_ID_HINT = (
    "Ids come from remember/recall (facts[].fact_id). recall the entity first to find the right fact; "
    "page slugs are not fact ids."
)


def forget(ctx: VerbContext, params: dict) -> dict:
    raw_id = params["id"].strip()
    fact_id = parse_fact_id(raw_id)
    if fact_id is None:
        raise VerbError("not_found", f'No fact with id "{params["id"]}".', _ID_HINT)
    reason = (params.get("reason") or "").strip() or None
    if ctx.dry_run:
        return {"dry_run": True, "action": "forget", "id": raw_id, "protocol_version": PROTOCOL_VERSION}
    row = ctx.brain.fact(fact_id)
    # Out of source, or private to a remote caller: exactly as if it did not exist.
    if row is None or row["source_id"] != ctx.source or (ctx.caller.remote and row["visibility"] != "world"):
        raise VerbError("not_found", f'No fact with id "{raw_id}".', _ID_HINT)
    expired = False
    if row["expired_at"] is None:
        expired = ctx.brain.expire_fact(fact_id, now_ms(), reason or "forgotten")
    return {"id": raw_id, "expired": expired, "reason": reason, "protocol_version": PROTOCOL_VERSION}


def parse_fact_id(raw: str) -> int | None:
    """A positive integer id, read the way JS Number() reads it ("1e3" and "0x10" count)."""
    if not raw:
        return None
    s = raw.strip().lower()
    if "_" in s:  # Python reads 1_000 as a number; the protocol (JS Number) does not
        return None
    try:
        if s.startswith(("0x", "0o", "0b")):
            value: float = int(s, 0)
        else:
            value = float(s)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value) or value <= 0 or value > 2**63 - 1:
        return None
    return int(value)
