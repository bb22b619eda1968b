"""entity: one card by name, alias or slug. Zero LLM, never an error on a miss."""

from __future__ import annotations

import time

from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, BrainError, invalid
from memverbs.server.timeparse import now_ms
from memverbs.server.verbs.cards import MAX_RUNNERS_UP, build_card, find_entity, near_misses


def entity(ctx: VerbContext, params: dict) -> dict:
    started = time.perf_counter()
    name = params["name"].strip()
    if not name:
        raise invalid(
            "name must be a non-empty string.",
            'Pass the entity to look up: a name ("Alice Example"), an alias ("@alice") or a slug '
            '("people/alice-example").',
        )
    trusted = ctx.caller.reads_private
    allow_private = ctx.pages_private_ok
    found = find_entity(ctx, name, allow_private=allow_private)
    body: dict = {"protocol_version": PROTOCOL_VERSION, "found": bool(found)}
    if found:
        best, runners = found[0], found[1 : 1 + MAX_RUNNERS_UP]
        card = build_card(ctx, best.page, include_private=trusted, allow_private=allow_private, now=now_ms())
        suggestions = [
            {"slug": c.page["slug"], "title": c.page["title"] or c.page["slug"], "create_safety": "exists"}
            for c in runners
        ]
    else:
        card = None
        try:
            suggestions = near_misses(ctx, name, allow_private=allow_private)
        except BrainError:
            suggestions = []  # a miss never errors; near-misses are best-effort
    body["latency_ms"] = round((time.perf_counter() - started) * 1000)
    if card is not None:
        body["card"] = card
    if suggestions or card is None:
        body["suggestions"] = suggestions
    return body
