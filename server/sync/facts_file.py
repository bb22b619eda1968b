"""Facts as a file: `memverbs-facts.jsonl` at the top of an exported folder.

One JSON object per line, keys sorted, lines sorted by (entity, kind, fact):

    {"entity": "people/alice", "fact": "Alice prefers async standups", "kind": "preference",
     "provenance": "conversation 2026-06-12", "valid_from": "2026-06-12T09:30:00.000Z",
     "valid_until": null, "visibility": "world"}

Only active facts are written (an expired fact is history, not knowledge; `export --full`
keeps history). `import` reads the file back through `remember` (entity, kind, visibility,
provenance kept; `valid_until` becomes the ttl; `valid_from` stays the time the fact became
true, not the time of the import), so a fact already in the brain is a duplicate, not a copy.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from memverbs.server.brain.base import Brain, FactFilter
from memverbs.server.timeparse import iso, now_ms, parse_instant
from memverbs.server.transport.wire import loads_strict


def fact_lines(brain: Brain, source: str, *, include_private: bool) -> tuple[list[str], int]:
    """The file's lines, and how many private facts were left out: without `include_private`, the
    private facts and the world facts about a private page (their entity names it)."""
    now = now_ms()
    rows = brain.facts(source, FactFilter(arm="recent", now=now, world_only=False, active_only=True, limit=10**9))
    private_pages: set[str] = set()
    if not include_private:
        entities = sorted({r["entity_slug"] for r in rows if r["entity_slug"]})
        private_pages = {slug for slug, page in brain.pages_by_slugs(source, entities, allow_private=True).items()
                         if page["visibility"] == "private"}
    out: list[dict] = []
    hidden = 0
    for r in rows:
        if not include_private and (r["visibility"] == "private" or r["entity_slug"] in private_pages):
            hidden += 1
            continue
        out.append(
            {
                "entity": r["entity_slug"],
                "fact": r["fact"],
                "kind": r["kind"],
                "provenance": r["provenance"],
                "valid_from": iso(r["valid_from"]),
                "valid_until": iso(r["valid_until"]),
                "visibility": r["visibility"],
            }
        )
    out.sort(key=lambda f: (f["entity"] or "", f["kind"], f["fact"], f["provenance"]))
    return [json.dumps(f, ensure_ascii=False, sort_keys=True) + "\n" for f in out], hidden


class FactLine(NamedTuple):
    line: int  # from 1
    params: dict | str  # remember's params, or why the line cannot be a fact
    valid_from: int | None  # when the fact became true, if the line says (epoch ms)


def read_facts(text: str) -> list[FactLine]:
    """Each line's remember params and time, or why the line cannot be one."""
    out: list[FactLine] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads_strict(line)  # a line someone else wrote: NaN, huge numbers or deep nesting are that line's error
        except ValueError as exc:
            out.append(FactLine(n, f"not JSON a fact can be ({getattr(exc, 'msg', None) or str(exc)[:200]})", None))
            continue
        if not isinstance(row, dict) or not isinstance(row.get("fact"), str) or not isinstance(row.get("provenance"), str):
            out.append(FactLine(n, "needs a fact and a provenance string", None))
            continue
        params = {"fact": row["fact"], "provenance": row["provenance"]}
        for key in ("entity", "kind", "visibility"):
            if isinstance(row.get(key), str) and row[key]:
                params[key] = row[key]
        if isinstance(row.get("valid_until"), str) and row["valid_until"]:
            params["ttl"] = row["valid_until"]
        since = row.get("valid_from")
        valid_from = parse_instant(since) if isinstance(since, str) else None
        if isinstance(since, str) and since and valid_from is None:
            out.append(FactLine(n, f"valid_from {since[:40]!r} is not a time (ISO 8601, e.g. 2026-06-12T09:30:00Z)", None))
            continue
        out.append(FactLine(n, params, valid_from))
    return out
