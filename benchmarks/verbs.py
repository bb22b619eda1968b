"""Verb latency at the op layer (BENCHMARKS.md §2): the dispatcher called in-process, no transport.

Every measured call is checked for real work — an entity call that found
nothing, a pack without its 8 cards or a delta without its 50 pages would be
measuring nothing, and fails the run instead.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from memverbs.server.context import Caller
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import iso, now_ms

from benchmarks.corpus import TARGETS


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]
    p50 = ordered[max(0, math.ceil(0.50 * len(ordered)) - 1)]
    return {"n": len(ordered), "p50_ms": round(p50, 3), "p99_ms": round(p99, 3), "max_ms": round(ordered[-1], 3)}


def timed(fn, warmup: int, measured: int, check) -> dict:
    for k in range(warmup):
        check(fn(k), k)
    samples = []
    for k in range(measured):
        start = time.perf_counter()
        body = fn(k)
        samples.append((time.perf_counter() - start) * 1000)
        check(body, k)
    return percentiles(samples)


class BenchError(AssertionError):
    """A measured call did no real work: the numbers would be meaningless."""


def call(dispatcher, name: str, params: dict) -> dict:
    outcome = dispatcher.call(name, params)
    if outcome.is_error:
        raise BenchError(f"{name}{params} failed: {outcome.body}")
    return outcome.body


def entity_names(i: int) -> list[tuple[str, bool]]:
    return [
        (f"tp{i}", True),
        (f"Target Person {i}", True),
        (f"people/target-person-{i}", True),
        (f"target-person-{i}", True),
        (f"zzz-absent-{i}", False),
    ]


def run_verbs(home: Path) -> dict:
    runtime = Runtime(Home(home))
    remote = runtime.mcp_dispatcher("verbs", Caller.mcp("default"))
    remote.on_call = None  # the usage log is transport bookkeeping, not verb latency
    local = runtime.local_dispatcher()
    names = [n for i in range(TARGETS) for n in entity_names(i)]
    results: dict = {}

    def entity(k: int) -> tuple[dict, bool]:
        name, hit = names[(k * 13) % len(names)]
        return call(remote, "entity", {"name": name}), hit

    def check_entity(pair, k):
        body, hit = pair
        if body["found"] is not hit or (hit and len(body["card"]["open_threads"]) == 0):
            raise BenchError(f"entity call {k} did not build the expected card: {body}")

    results["entity"] = timed(entity, 20, 200, check_entity)

    forms = [lambda i: f"tp{i}", lambda i: f"Target Person {i}", lambda i: f"people/target-person-{i}"]

    def pack(k: int) -> dict:
        entities = ",".join(forms[(k + j) % 3]((k * 8 + j) % TARGETS) for j in range(8))
        return call(remote, "context_pack", {"entities": entities, "session_id": f"bench-{k}-{time.time_ns()}"})

    def check_pack(body, k):
        if len(body["cards"]) != 8:
            raise BenchError(f"context_pack call {k} built {len(body['cards'])} cards, not 8")

    results["context_pack"] = timed(pack, 10, 100, check_pack)

    # delta: 150 filler pages and 100 filler facts move an hour ahead; since = now + 30 min.
    brain = runtime.brain()
    ahead = now_ms() + 3_600_000
    with brain.write() as db:
        db.execute("UPDATE pages SET updated_at = ? WHERE slug IN (SELECT slug FROM pages WHERE slug LIKE 'filler/%' LIMIT 150)", (ahead,))
        db.execute("UPDATE facts SET created_at = ? WHERE id IN (SELECT id FROM facts WHERE entity_slug LIKE 'filler/%' LIMIT 100)", (ahead,))
    since = iso(now_ms() + 1_800_000)

    def delta(k: int) -> dict:
        return call(remote, "delta", {"since": since})

    def check_delta(body, k):
        if len(body["pages"]) != 50 or body["has_more"] is not True or not body["facts"]:
            raise BenchError(f"delta call {k} delivered {len(body['pages'])} pages / {len(body['facts'])} facts")

    results["delta"] = timed(delta, 10, 100, check_delta)

    def recall_entity(k: int) -> dict:
        return call(remote, "recall", {"entity": f"people/target-person-{k % TARGETS}"})

    results["recall_entity"] = timed(recall_entity, 10, 100, lambda b, k: _need(b["total"] == 20, f"recall {k}: {b['total']} facts"))

    def recall_query(k: int) -> dict:
        query = f"Target Person {k % TARGETS}" if k % 2 == 0 else f"zzz nothing {k}"
        return call(remote, "recall", {"query": query, "limit": 10})

    def check_query(body, k):
        if k % 2 == 0 and not body["results"]:
            raise BenchError(f"recall query {k} found nothing")

    results["recall_query"] = timed(recall_query, 10, 100, check_query)

    count = 500
    start = time.perf_counter()
    for k in range(count):
        body = call(local, "remember", {"fact": f"bench remember {k} {time.time_ns()}", "provenance": "bench", "entity": "people/target-person-1"})
        _need(body["status"] == "inserted", f"remember {k}: {body['status']}")
    elapsed = time.perf_counter() - start
    results["remember_rate"] = {"n": count, "facts_per_s": round(count / elapsed, 1)}
    runtime.close()
    return results


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise BenchError(what)
