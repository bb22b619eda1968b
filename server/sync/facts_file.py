"""Facts as a file: `memverbs-facts.jsonl` at the top of an exported folder.

One JSON object per line, keys sorted, lines sorted by (entity, kind, fact):

    {"entity": "people/alice", "fact": "Alice prefers async standups", "kind": "preference",
     "provenance": "conversation 2026-06-12", "valid_until": null, "visibility": "world"}

Only active facts are written (an expired fact is history, not knowledge). `import`
reads the file back through `remember` (entity, kind, visibility, provenance kept;
`valid_until` becomes the ttl), so a fact already in the brain is a duplicate, not a copy.
"""

from __future__ import annotations

import json

from memverbs.server.brain.base import Brain, FactFilter
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.transport.wire import loads_strict


def fact_lines(brain: Brain, source: str, *, include_private: bool) -> tuple[list[str], int]:
    """The file's lines, and how many private facts were left out."""
    now = now_ms()
    rows = brain.facts(source, FactFilter(arm="recent", now=now, world_only=False, active_only=True, limit=10**9))
    out: list[dict] = []
    hidden = 0
    for r in rows:
        if r["visibility"] == "private" and not include_private:
            hidden += 1
            continue
        out.append(
            {
                "entity": r["entity_slug"],
                "fact": r["fact"],
                "kind": r["kind"],
                "provenance": r["provenance"],
                "valid_until": iso(r["valid_until"]),
                "visibility": r["visibility"],
            }
        )
    out.sort(key=lambda f: (f["entity"] or "", f["kind"], f["fact"], f["provenance"]))
    return [json.dumps(f, ensure_ascii=False, sort_keys=True) + "\n" for f in out], hidden


def read_facts(text: str) -> list[tuple[int, dict | str]]:
    """Each line's remember params, or why the line cannot be one (line numbers from 1)."""
    out: list[tuple[int, dict | str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads_strict(line)  # a line someone else wrote: NaN, huge numbers or deep nesting are that line's error
        except ValueError as exc:
            out.append((n, f"not JSON a fact can be ({getattr(exc, 'msg', None) or str(exc)[:200]})"))
            continue
        if not isinstance(row, dict) or not isinstance(row.get("fact"), str) or not isinstance(row.get("provenance"), str):
            out.append((n, "needs a fact and a provenance string"))
            continue
        params = {"fact": row["fact"], "provenance": row["provenance"]}
        for key in ("entity", "kind", "visibility"):
            if isinstance(row.get(key), str) and row[key]:
                params[key] = row[key]
        if isinstance(row.get("valid_until"), str) and row["valid_until"]:
            params["ttl"] = row["valid_until"]
        out.append((n, params))
    return out
