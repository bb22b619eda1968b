"""The OAuth clients as the brain's owner sees them: each with what it holds now.

`memverbs auth clients` prints these rows and the inspector's Access view shows the same ones.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memverbs.server.timeparse import iso, now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain


def client_rows(brain: Brain, *, include_revoked: bool = False) -> list[dict[str, Any]]:
    """Every OAuth client with what it holds now: the inspector shows the same rows."""
    holding: dict[int, dict[str, Any]] = {}
    for g in brain.oauth_live_grants(now_ms()):
        if g["kind"] == "refresh" or g["client_ref"] not in holding:  # the newest grant wins
            holding[g["client_ref"]] = {"scopes": g["scopes"], "surface": g["surface"], "source_id": g["source_id"]}
    rows = []
    for c in brain.oauth_clients(include_revoked=include_revoked):
        meta = json.loads(c["metadata"])
        grant = holding.get(c["id"])
        rows.append({
            "client_id": c["client_id"],
            "name": c["name"],
            "redirect_uris": meta.get("redirect_uris") or [],
            "scopes": grant["scopes"] if grant else None,
            "surface": grant["surface"] if grant else None,
            "lane": c["lane"],
            "created_at": iso(c["created_at"]),
            "last_used_at": iso(c["last_used_at"]),
            "revoked_at": iso(c["revoked_at"]),
        })
    return rows
