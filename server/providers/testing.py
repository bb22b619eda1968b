"""A deterministic, offline embedder for tests and benchmarks — not a model.

It hashes a bag of concepts: words are lowercased, stop words dropped, crudely
stemmed, and mapped through a small table of synonym groups (so "ship",
"release" and "deploy" land on one concept, as a real model would place them
near each other), then feature-hashed into `dims` signed buckets and scaled to
unit length. That makes paraphrase tests meaningful and reproducible with no
network and no weights; it knows nothing beyond its table, so numbers measured
with it say the retrieval machinery works, not how good a real model is.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_WORD = re.compile(r"[a-z0-9]+")

STOP_WORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "over", "under", "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have", "has", "had", "having", "it", "its", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "each", "every", "some", "no", "not", "nor", "only", "own", "same", "so", "than", "too", "very", "can", "will", "just", "should", "would", "could", "may", "might", "must", "shall", "our", "we", "us", "you", "your", "he", "him", "his", "she", "her", "they", "them", "their", "i", "me", "my", "mine", "up", "down", "out", "off", "again", "further", "then", "once", "also", "yet", "still", "ever", "before", "after", "during", "while", "until"]
)

SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("deploy", "release", "ship", "rollout", "launch", "publish"),
    ("freeze", "halt", "pause", "stop", "block", "moratorium"),
    ("friday", "weekend"),
    ("bug", "defect", "fault", "glitch", "regression"),
    ("outage", "incident", "downtime", "disruption"),
    ("payment", "billing", "invoice", "charge", "checkout"),
    ("customer", "client", "buyer", "account"),
    ("meet", "meeting", "standup", "sync", "call"),
    ("prefer", "like", "favor", "favour", "enjoy", "love"),
    ("hire", "recruit", "onboard", "interview", "candidate"),
    ("salary", "compensation", "wage", "paycheck"),
    ("manager", "boss", "lead", "supervisor", "head"),
    ("leave", "quit", "resign", "depart", "exit"),
    ("move", "relocate", "migrate", "transfer"),
    ("cost", "price", "spend", "expense", "budget"),
    ("cheap", "inexpensive", "affordable", "low-cost"),
    ("fast", "quick", "speed", "latency", "slow", "performance"),
    ("secret", "credential", "password", "token"),
    ("doc", "documentation", "guide", "manual", "handbook"),
    ("database", "db", "postgres", "sqlite", "storage"),
    ("vacation", "holiday", "pto", "time-off"),
    ("car", "automobile", "vehicle"),
    ("laptop", "computer", "machine", "workstation"),
    ("office", "workplace", "headquarters", "hq"),
    ("remote", "distributed", "home"),
    ("contract", "agreement", "deal"),
    ("lawyer", "attorney", "counsel", "legal"),
    ("doctor", "physician", "medical"),
    ("allergy", "allergic", "intolerance"),
    ("dog", "puppy", "pet"),
    ("tea", "chai"),
    ("big", "large", "huge"),
    ("error", "exception", "failure", "crash"),
    ("test", "spec", "check", "verification"),
    ("plan", "roadmap", "strategy"),
    ("goal", "objective", "target", "okr"),
    ("revenue", "sales", "income"),
    ("investor", "funding", "raise", "vc"),
    ("backup", "snapshot", "restore"),
    ("login", "signin", "authentication", "auth", "sso"),
    ("rent", "lease"),
    ("bike", "bicycle", "cycling"),
    ("birthday", "born"),
    ("wedding", "marry", "married"),
    ("book", "novel", "read"),
)

_ENDINGS = ("ations", "ation", "ments", "ment", "ings", "ing", "edly", "ed", "ly")


def stem(word: str) -> str:
    """A crude, consistent suffix stripper: "deployments", "deploying" and "deploy" meet; nothing more."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "xes", "ches", "shes", "zes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for ending in _ENDINGS:
        if w.endswith(ending) and len(w) - len(ending) >= 3:
            w = w[: -len(ending)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # shipping → shipp → ship
        w = w[:-1]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _concepts() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        head = stem(group[0])
        for word in group:
            table[stem(word)] = head
            table[word] = head
    return table


CONCEPTS = _concepts()


def features(text: str) -> Counter:
    out: Counter = Counter()
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS:
            continue
        out[CONCEPTS.get(word) or CONCEPTS.get(stem(word)) or stem(word)] += 1
    return out


def _bucket(feature: str, dims: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dims, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Deterministic bag-of-concepts vectors; `calls` counts embed() calls (tests assert on reuse)."""

    provider = "testing"

    def __init__(self, dims: int = 256, model: str = "hashing-bow-v1") -> None:
        self.model = model
        self._dims = dims
        self.calls = 0
        self.texts_embedded = 0

    @property
    def dims(self) -> int:
        return self._dims

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np  # noqa: PLC0415

        self.calls += 1
        self.texts_embedded += len(texts)
        rows = np.zeros((len(texts), self._dims), dtype=np.float32)
        for i, text in enumerate(texts):
            for feature, tf in features(text).items():
                j, sign = _bucket(feature, self._dims)
                rows[i, j] += sign * (1.0 + math.log(tf))
        from memverbs.server.providers.embeddings import normalise  # noqa: PLC0415

        return normalise(rows)

    def close(self) -> None:
        pass
