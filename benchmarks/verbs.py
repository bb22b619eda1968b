"""The measured calls (BENCHMARKS.md §2), timed at the op layer and over MCP stdio.

One workload, three ways of running it:

* `op_layer`: the dispatcher called in-process as an MCP caller, usage log on
  (transport excluded);
* `over_stdio`: `memverbs serve` spawned, raw JSON-RPC over its pipes, timed
  client side (transport included: what a harness waits for);
* `interleaved` (benchmarks/side_by_side.py): two servers, call k on one then
  on the other, so both see the same machine load.

Every measured call is checked for real work — an entity call that found
nothing, a pack without its 8 cards or a delta without its 50 pages would be
measuring nothing, and fails the run instead.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import TARGETS, Call
from memverbs.server.timeparse import iso, now_ms


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]
    p50 = ordered[max(0, math.ceil(0.50 * len(ordered)) - 1)]
    return {"n": len(ordered), "p50_ms": round(p50, 3), "p99_ms": round(p99, 3), "max_ms": round(ordered[-1], 3)}


class BenchError(AssertionError):
    """A measured call did no real work: the numbers would be meaningless."""


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise BenchError(what)


@dataclass(frozen=True)
class Verb:
    """One measured call: the tool, its arguments for call k, and the check that it did real work."""

    name: str
    tool: str | None  # None: a JSON-RPC ping, no tool
    warmup: int
    measured: int
    args: Callable[[int], dict]
    check: Callable[[dict, int], None]


def entity_names(i: int) -> list[tuple[str, bool]]:
    return [
        (f"tp{i}", True),
        (f"Target Person {i}", True),
        (f"people/target-person-{i}", True),
        (f"target-person-{i}", True),
        (f"zzz-absent-{i}", False),
    ]


_FORMS = [lambda i: f"tp{i}", lambda i: f"Target Person {i}", lambda i: f"people/target-person-{i}"]


def _check_query(body: dict, k: int) -> None:
    _need(k % 2 == 1 or bool(body.get("results")), f"recall query {k} found nothing")


def workload(delta_since: str, scale: float = 1.0, targets: int = TARGETS) -> list[Verb]:
    """The measured verbs, in the order they run (delta before remember adds facts of its own).

    `scale` shrinks the call counts and `targets` the target people (smoke runs); the calls stay the same."""
    names = [n for i in range(targets) for n in entity_names(i)]

    def check_entity(body: dict, k: int) -> None:
        hit = names[(k * 13) % len(names)][1]
        _need(body.get("found") is hit and (not hit or len(body["card"]["open_threads"]) > 0),
              f"entity call {k} did not build the expected card: {str(body)[:300]}")

    def pack_args(k: int) -> dict:
        entities = ",".join(_FORMS[(k + j) % 3]((k * 8 + j) % targets) for j in range(8))
        return {"entities": entities, "session_id": f"bench-{k}-{time.time_ns()}"}

    verbs = [
        Verb("ping", None, 20, 200, lambda k: {}, lambda b, k: None),
        Verb("entity", "entity", 20, 200, lambda k: {"name": names[(k * 13) % len(names)][0]}, check_entity),
        Verb("context_pack", "context_pack", 10, 100, pack_args,
             lambda b, k: _need(len(b.get("cards", [])) == 8, f"context_pack call {k} built {len(b.get('cards', []))} cards, not 8")),
        Verb("delta", "delta", 10, 100, lambda k: {"since": delta_since},
             lambda b, k: _need(len(b.get("pages", [])) == 50 and b.get("has_more") is True and bool(b.get("facts")),
                                f"delta call {k} delivered {len(b.get('pages', []))} pages / {len(b.get('facts', []))} facts")),
        Verb("recall_entity", "recall", 10, 100, lambda k: {"entity": f"people/target-person-{k % targets}"},
             lambda b, k: _need(b.get("total") == 20, f"recall {k}: {b.get('total')} facts, not 20")),
        Verb("recall_query", "recall", 10, 100,
             lambda k: {"query": f"Target Person {k % targets}" if k % 2 == 0 else f"zzz nothing {k}", "limit": 10},
             _check_query),
        Verb("remember", "remember", 10, 100,
             lambda k: {"fact": f"bench remember {k} {time.time_ns()}", "provenance": "bench",
                        "entity": f"filler/page-{k + 1}"},
             lambda b, k: _need(b.get("status") == "inserted", f"remember {k}: {b.get('status')}")),
    ]
    if scale == 1.0:
        return verbs
    return [Verb(v.name, v.tool, max(2, int(v.warmup * scale)), max(5, int(v.measured * scale)), v.args, v.check) for v in verbs]


def prepare_delta(call: Call) -> str:
    """Change 150 filler pages and record 100 facts through the tools; returns the `since` before them.

    delta then has real work on every call: 50 pages a page, more waiting, facts.
    """
    since = iso(now_ms() - 1)
    time.sleep(0.005)
    for n in range(1, 151):
        call("put_page", {"slug": f"filler/page-{n}", "content": f"---\ntitle: Filler {n}\ntype: note\n---\n# Filler, edited\n"})
    for n in range(100):
        call("remember", {"fact": f"delta fact {n} {time.time_ns()}", "provenance": "bench", "entity": f"filler/page-{n + 1}"})
    return since


# -- runners -----------------------------------------------------------------------------------

Timed = Callable[[Verb, int], tuple[dict, float]]  # (verb, k) -> (body, milliseconds)


def measure(verbs: list[Verb], timed: Timed) -> dict:
    results = {}
    for verb in verbs:
        for k in range(verb.warmup):
            verb.check(timed(verb, k)[0], k)
        samples = []
        for k in range(verb.measured):
            body, ms = timed(verb, verb.warmup + k)
            verb.check(body, verb.warmup + k)
            samples.append(ms)
        results[verb.name] = percentiles(samples)
    return results


def op_layer(home: Path, scale: float = 1.0, targets: int = TARGETS) -> dict:
    """The dispatcher in-process as an MCP caller (full surface), usage log on as in production."""
    from memverbs.server.context import Caller  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))
    remote = runtime.mcp_dispatcher("full", Caller.mcp("default"))
    local = runtime.local_dispatcher()

    def local_call(tool: str, args: dict) -> dict:
        outcome = local.call(tool, args)
        _need(not outcome.is_error, f"{tool} failed: {outcome.body}")
        return outcome.body

    def timed(verb: Verb, k: int) -> tuple[dict, float]:
        args = verb.args(k)
        start = time.perf_counter()
        outcome = remote.call(verb.tool, args) if verb.tool else None
        ms = (time.perf_counter() - start) * 1000
        if outcome is None:
            return {}, ms
        _need(not outcome.is_error, f"{verb.tool}{args} failed: {outcome.body}")
        return outcome.body, ms

    try:
        since = prepare_delta(local_call)
        # ping has no op-layer equivalent: it is transport only.
        return measure([v for v in workload(since, scale, targets) if v.tool], timed)
    finally:
        runtime.close()


def stdio_timer(client) -> Timed:
    def timed(verb: Verb, k: int) -> tuple[dict, float]:
        if verb.tool is None:
            return {}, client.ping()
        body, ms, is_error = client.call(verb.tool, verb.args(k))
        _need(not is_error, f"{verb.tool} failed over stdio: {str(body)[:300]}")
        return body, ms
    return timed


def stdio_call(client) -> Call:
    def call(tool: str, args: dict) -> dict:
        body, _, is_error = client.call(tool, args)
        _need(not is_error, f"{tool} failed over stdio: {str(body)[:300]}")
        return body
    return call


def over_stdio(home: Path, command: list[str], scale: float = 1.0, settle_s: float = 2.5, targets: int = TARGETS) -> dict:
    """`memverbs serve` on `home`, spawned as a harness spawns it; client-side latency per call."""
    from benchmarks.startup import _env  # noqa: PLC0415
    from benchmarks.stdio_client import StdioClient  # noqa: PLC0415

    with StdioClient([*command, "serve", "--surface", "full"], env=_env(home)) as client:
        time.sleep(settle_s)  # let any start-up front hand over: measure the steady state a session lives in
        since = prepare_delta(stdio_call(client))
        return measure(workload(since, scale, targets), stdio_timer(client))
