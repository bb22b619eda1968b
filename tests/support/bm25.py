"""FTS5's BM25 written out in Python: what both backends' facts ranking is held to (tests/server/brain)."""

from __future__ import annotations

import math


def bm25(facts: list[tuple[int, str]], terms: list[str]) -> list[tuple[float, int]]:
    """(score, id) best first, ties newest first, of `facts` ((id, stored terms)) for an OR query of `terms`:
    k1 1.2, b 0.75, idf floored at 1e-6, N and the mean length over all of `facts`, shares summed in order."""
    docs = {i: t.split() for i, t in facts}
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n
    scores: dict[int, float] = {}
    for term in terms:
        hits = sum(term in d for d in docs.values())
        idf = math.log((n - hits + 0.5) / (hits + 0.5))
        idf = idf if idf > 0 else 1e-6
        for i, d in docs.items():
            tf = d.count(term)
            if tf:
                scores[i] = scores.get(i, 0.0) + idf * ((tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * len(d) / avgdl)))
    return sorted(((s, i) for i, s in scores.items()), key=lambda p: (-p[0], -p[1]))
