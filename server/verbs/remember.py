"""remember: save one fact with mandatory attribution. Zero LLM; one embedding call with a provider.

Dedup and supersession (PROTOCOL.md §5.2): with an entity and an embedding,
the bucket's active facts (same source, same entity, same visibility, ttl not
passed) that have vectors are ranked by cosine; the top-5 are candidates and the best decides.
At ≥ 0.95 a fact of another kind is a duplicate (nothing written, the existing id returned);
one of the same kind is an update only when it says something new about the same subject
(`_settles`): similar words are not enough. A restatement (the same content words: only case,
punctuation, function words or their order differ) or one that says less is a duplicate; an
event never supersedes another (both happened: two commits with one message, two releases),
so a new one is inserted; otherwise the new fact supersedes the old (expired with
the reason `superseded by fact #<new>`).

Without an embedding (no provider, or the call failed) near-duplicates cannot
be found, so the response says `degraded_dedup: true`; an exact restatement
(the same text up to case, spacing and final punctuation, same entity, still
active) is still a `duplicate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memverbs.server.brain.base import NewFact, Row
from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, ProviderError, VerbError, invalid
from memverbs.server.names import looks_like_slug, restatement_key
from memverbs.server.protocol.verb_defs import KINDS, VISIBILITIES
from memverbs.server.terms import query_terms
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.verbs.cards import resolve_entity_slug
from memverbs.server.verbs.ttl import parse_ttl

PROVENANCE_MAX = 500
DEDUP_COSINE = 0.95
DEDUP_CANDIDATES = 5
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
    name = (params.get("entity") or "").strip()
    # What is remembered in a project is the project's (server/projects.py): the fact records it,
    # and a fact about nothing named is about the project itself.
    project = ctx.project_slug(register=True)
    # An entity that looks like a slug is most often an existing page's: the write itself checks
    # for that page (under the visibility rule resolution applies), which saves a database server
    # a round trip; only when the page is not there does the entity go the whole way through resolution.
    probe = looks_like_slug(name)
    new = NewFact(
        fact=fact,
        fact_norm=restatement_key(fact),
        kind=kind,
        entity_slug=name if probe else (resolve_entity_slug(ctx, name) if name else project),
        visibility=visibility,
        # Stored verbatim: the attribution is evidence, not something to tidy.
        provenance=params["provenance"],
        valid_until=valid_until,
        project=project,
        # A trusted import reading a fact back from an export keeps the time it became true (dispatch's extras).
        valid_from=ctx.extras.get("valid_from"),
    )
    embedded = _embed_fact(ctx, fact)
    status, fact_id, existing = _write(ctx, new, now, embedded, require_page=probe)
    if status == "no_page":
        new.entity_slug = resolve_entity_slug(ctx, name)  # no such page: the name goes the whole way
        status, fact_id, existing = _write(ctx, new, now, embedded, require_page=False)
    entity_slug = new.entity_slug
    if status == "duplicate":
        assert existing is not None, "a duplicate names the fact it matched"
        text, valid_until = f"already knew this — kept fact #{fact_id}", existing["valid_until"]
    elif status == "superseded":
        text = f"updated — fact #{fact_id} supersedes the previous version"
    else:
        text = f"remembered as fact #{fact_id}"
    body: dict[str, object] = {
        "id": str(fact_id),
        "status": status,
        "status_text": text,
        "entity_slug": entity_slug,
        "valid_until": iso(valid_until),
    }
    if embedded is None:
        body["degraded_dedup"] = True
    body["protocol_version"] = PROTOCOL_VERSION
    return body


def _write(ctx: VerbContext, new: NewFact, now: int, embedded: _Embedded | None, *, require_page: bool) -> tuple[str, int, Row | None]:
    return ctx.brain.remember_fact(
        ctx.source,
        new,
        now,
        vector=embedded.vector if embedded else None,
        space_id=embedded.space_id if embedded else None,
        choose=_chooser(new, embedded.vector, embedded.dims) if embedded else None,
        # A remote caller must not learn that a private fact exists from a `duplicate`: it never
        # dedups against private facts, and a private fact is only ever matched by a private one.
        dedup=not (ctx.caller.remote and new.visibility == "private"),
        require_page=require_page,
        allow_private=ctx.pages_private_ok,
    )


@dataclass(frozen=True)
class _Embedded:
    vector: bytes  # packed
    space_id: int | None
    dims: int


def _embed_fact(ctx: VerbContext, fact: str) -> _Embedded | None:
    """The fact's vector, or None when there is no provider or the call failed."""
    if ctx.providers is None or not ctx.providers.embeddings_configured:
        return None
    from memverbs.server.brain.base import pack  # noqa: PLC0415 - numpy only with a provider
    from memverbs.server.verbs.semantic import embed, embedder  # noqa: PLC0415

    if embedder(ctx) is None:
        return None
    try:
        space_id, rows = embed(ctx, [fact])
    except ProviderError as exc:
        import logging  # noqa: PLC0415 - a provider's failure only: a read without one never logs

        logging.getLogger("memverbs.remember").warning("fact not embedded, dedup degraded (%s): %s", exc.kind, exc.message)
        return None
    return _Embedded(pack(rows[0]), space_id, int(rows.shape[1]))


def _chooser(new: NewFact, vector: bytes, dims: int) -> Callable[[list[Row]], tuple[str, Row] | None]:
    """The rule, given the bucket's candidates: duplicate, superseded, or None (insert)."""

    def choose(rows: list[Row]) -> tuple[str, Row] | None:
        if not rows:
            return None
        import numpy as np  # noqa: PLC0415

        from memverbs.server.brain.base import unpack  # noqa: PLC0415

        query = unpack([vector], dims)[0]
        sims = unpack([r["vector"] for r in rows], dims) @ query
        top = np.argsort(-sims, kind="stable")[:DEDUP_CANDIDATES]
        best = int(top[0])
        if float(sims[best]) < DEDUP_COSINE:
            return None
        row = rows[best]
        if row["kind"] != new.kind or row["fact_norm"] == new.fact_norm:
            return "duplicate", row
        settled = _settles(row["fact_norm"], new.fact_norm, new.kind)
        return None if settled is None else (settled, row)

    return choose


def _settles(old: str, new: str, kind: str) -> str | None:
    """What a new fact of the same kind is to a near-identical old one: "duplicate" when it says
    nothing the old one does not (its content words are among the old one's), None (a fact of its
    own) when both are events, else "superseded": it keeps the subject and changes or adds what is
    said about it ("Alice prefers tea" → "Alice likes tea")."""
    said, says = set(query_terms(old, cap=None)), set(query_terms(new, cap=None))
    if says <= said:
        return "duplicate"
    return None if kind == "event" else "superseded"
