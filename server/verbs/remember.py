"""remember: save one fact with mandatory attribution. Zero LLM.

Without an embedding provider, near-duplicate detection cannot run, so every
response says `degraded_dedup: true`; an exact restatement (same normalised
text, same entity, still active) is still caught and answered `duplicate`.
"""

from __future__ import annotations

from memverbs.server.brain.sqlite_facts import NewFact
from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, VerbError, invalid
from memverbs.server.names import collapse
from memverbs.server.protocol.verb_defs import KINDS, VISIBILITIES
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.verbs.cards import resolve_entity_slug
from memverbs.server.verbs.ttl import parse_ttl

PROVENANCE_MAX = 500
_PROVENANCE_EXAMPLES = '"conversation 2026-06-12", "user said in chat", "import: notes.md"'


def remember(ctx: VerbContext, params: dict) -> dict:
    fact = params["fact"].strip()
    if not fact:
        raise invalid(
            "fact must be a non-empty string.",
            'Pass the fact as one self-contained sentence, e.g. fact: "Alice prefers async standups".',
        )
    provenance = params["provenance"].strip()
    if not provenance:
        raise VerbError(
            "provenance_required",
            "provenance is required and must be non-empty.",
            f"Every fact needs an attribution so it can be trusted later. Say where it came from, e.g. {_PROVENANCE_EXAMPLES}.",
        )
    if len(provenance) > PROVENANCE_MAX:
        raise invalid(
            f"provenance exceeds {PROVENANCE_MAX} chars (got {len(provenance)}).",
            "Shorten the attribution — provenance is a pointer, not a transcript.",
        )
    kind = params.get("kind", "fact")
    visibility = params.get("visibility", "world")
    if kind not in KINDS:
        raise invalid(f'Parameter "kind" must be one of: {", ".join(KINDS)}')
    if visibility not in VISIBILITIES:
        raise invalid(f'Parameter "visibility" must be one of: {", ".join(VISIBILITIES)}')
    now = now_ms()
    valid_until = parse_ttl(params.get("ttl"), now)
    if ctx.dry_run:
        return {"dry_run": True, "action": "remember", "fact": fact, "protocol_version": PROTOCOL_VERSION}
    entity_slug = resolve_entity_slug(ctx, params.get("entity"))
    new = NewFact(
        fact=fact,
        fact_norm=collapse(fact).lower(),
        kind=kind,
        entity_slug=entity_slug,
        visibility=visibility,
        # Stored verbatim: the attribution is evidence, not something to tidy.
        provenance=params["provenance"],
        valid_until=valid_until,
    )
    fact_id, duplicate = ctx.brain.insert_unless_duplicate(ctx.source, new, now)
    if duplicate is not None:
        status, text, valid_until = "duplicate", f"already knew this — kept fact #{fact_id}", duplicate["valid_until"]
    else:
        status, text = "inserted", f"remembered as fact #{fact_id}"
    return {
        "id": str(fact_id),
        "status": status,
        "status_text": text,
        "entity_slug": entity_slug,
        "valid_until": iso(valid_until),
        "degraded_dedup": True,
        "protocol_version": PROTOCOL_VERSION,
    }
