"""A team's mixed workload over HTTP: 70 % remember, 10 % put_page, 20 % reads, from N MCP clients.

Shared by `benchmarks/two_hosts.py --mixed` (throughput, p95, errors; no retries: every failure
counts) and the fault-and-load test (tests/server/transport/test_team_faults.py: retries through a
kill -9 and a database restart). Each client has its own HTTP connection per server and a bearer
token, and works through a fixed pattern of ten calls, offset per client so the kinds interleave:

* `remember` — a fact of its own (run, client, call number) about one of the entities;
* `put_page` — a page of its own (`notes/<run>-c<client>-<n>`) that links two entities, once by
  slug and once by title, so saving it resolves links (the reads a write makes under the write lock);
* `recall` of an entity's facts, or `entity` (its card).

Acknowledged means answered without error: a remember `inserted`, or `duplicate` of the same fact
(a retry whose first try was written before its answer was lost) with the id it was given; a
put_page `created` or `updated`. `verify` counts the brain against the acknowledgements.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.http_load import HEADERS, call_body, percentile, tool_reply

PATTERN = ("remember", "remember", "recall", "remember", "put_page", "remember", "remember", "entity", "remember",
           "remember")  # 7 remember, 1 put_page, 2 reads in every ten
ENTITY_COUNT = 20
PROVENANCE = "mixed-workload benchmark"


def entity(k: int) -> str:
    return f"people/member-{k % ENTITY_COUNT}"


def seed_pages() -> list[tuple[str, str]]:
    """The entities' pages (slug, markdown): what the reads find and the page writes link to."""
    return [(entity(k), f"---\ntitle: Member {k}\n---\nMember {k} of the team.\n") for k in range(ENTITY_COUNT)]


@dataclass
class ClientResult:
    facts: list[tuple[str, str]] = field(default_factory=list)  # (fact, id) acknowledged
    pages: list[str] = field(default_factory=list)  # slugs acknowledged
    latencies: list[float] = field(default_factory=list)  # ms, calls answered at the first try, timed part only
    kinds: list[str] = field(default_factory=list)  # the verb of each latency
    calls: int = 0  # timed calls answered (retries not counted twice)
    errors: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, what the client saw)


class Failed(Exception):
    """A call answered with an error, or not at all."""


def _call(http, url: str, tool: str, arguments: dict) -> dict:
    import httpx  # noqa: PLC0415

    try:
        response = http.post(url, json=call_body(1, tool, arguments))
    except httpx.HTTPError as exc:
        raise Failed(f"{type(exc).__name__}: {exc}") from exc
    try:
        result, payload = tool_reply(response, limit=300)
    except ValueError as exc:
        raise Failed(str(exc)) from exc
    if result.get("isError"):
        raise Failed(json.dumps(payload)[:300])
    return payload


def _step(run: str, client: int, n: int) -> tuple[str, dict]:
    kind = PATTERN[(n + 3 * client) % len(PATTERN)]
    who = entity(client * 7 + n)
    if kind == "remember":
        return kind, {"fact": f"{run} client {client} fact {n}: the deploy window moved", "provenance": PROVENANCE,
                      "entity": who}
    if kind == "put_page":
        other = (client * 7 + n + 1) % ENTITY_COUNT
        body = f"# Note {n} of client {client}\n\nAgreed with [[{who}]] and [[Member {other}]] today.\n"
        return kind, {"slug": f"notes/{run}-c{client}-{n}", "content": body}
    if kind == "recall":
        return kind, {"entity": who}
    return kind, {"name": who}


def _acknowledge(kind: str, arguments: dict, payload: dict, out: ClientResult) -> None:
    if kind == "remember":
        if payload.get("status") not in ("inserted", "duplicate"):
            raise Failed(f"remember answered {json.dumps(payload)[:200]}")
        out.facts.append((arguments["fact"], payload["id"]))
    elif kind == "put_page":
        if payload.get("status") not in ("created", "updated"):
            raise Failed(f"put_page answered {json.dumps(payload)[:200]}")
        out.pages.append(arguments["slug"])


def client_loop(urls: list[str], token: str, client: int, run: str, clock: dict, out: ClientResult, *,
                cap: int, warmup: int = 2, retry_s: float = 0.0) -> None:
    """Calls until the clock runs out or `cap` calls; with `retry_s`, a failed call is tried again
    (on the next server, after a pause) for up to that long before it counts as an error."""
    import httpx  # noqa: PLC0415

    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    https = [httpx.Client(timeout=30, headers=headers) for _ in urls]
    home_server = client % len(urls)
    try:
        for n in range(cap):
            if n == warmup:
                clock["start"].wait(timeout=120)  # every client warmed up: the timed part starts for all at once
                out.latencies.clear()
                out.kinds.clear()
                out.calls = 0
            if n >= warmup and time.monotonic() >= clock["end"]:
                break
            kind, arguments = _step(run, client, n)
            give_up = time.monotonic() + retry_s
            attempt = 0
            while True:
                which = (home_server + attempt) % len(urls)
                started = time.perf_counter()
                try:
                    payload = _call(https[which], urls[which], kind, arguments)
                    _acknowledge(kind, arguments, payload, out)
                except Failed as exc:
                    out.errors.append((time.monotonic(), f"{kind} via server {which}: {exc}"))
                    attempt += 1
                    if time.monotonic() < give_up:
                        time.sleep(min(0.2 * attempt, 1.0))
                        continue
                    break
                if attempt == 0:
                    out.latencies.append((time.perf_counter() - started) * 1000)
                    out.kinds.append(kind)
                out.calls += 1
                break
    finally:
        for http in https:
            http.close()


def run_mixed(urls: list[str], token: str, run: str, *, clients: int, seconds: float, cap: int,
              retry_s: float = 0.0, on_start: Callable[[], None] | None = None,
              progress: dict | None = None) -> dict:
    """`clients` threads over the servers (client i starts on server i % len(urls)); the figures of the timed part.

    `progress`, when given, gets `calls()`: how many calls have been answered so far (a fault test
    strikes after some progress rather than after some time, which a fast machine outruns)."""
    results = [ClientResult() for _ in range(clients)]
    if progress is not None:
        progress["calls"] = lambda: sum(r.calls for r in results)
    clock: dict = {"end": float("inf")}

    def start() -> None:  # run by the last client to warm up, before any is released
        clock["started"] = time.monotonic()
        clock["end"] = clock["started"] + seconds
        if on_start is not None:
            on_start()

    clock["start"] = threading.Barrier(clients, action=start)

    def one(c: int) -> None:
        try:
            client_loop(urls, token, c, run, clock, results[c], cap=cap, retry_s=retry_s)
        except Exception as exc:  # noqa: BLE001 - a client that dies fails the run, reported, not hung
            clock["start"].abort()
            results[c].errors.append((time.monotonic(), f"client {c}: {type(exc).__name__}: {exc}"))

    threads = [threading.Thread(target=one, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ended = time.monotonic()
    elapsed = ended - clock.get("started", ended)
    latencies = sorted(ms for r in results for ms in r.latencies)
    calls = sum(r.calls for r in results)
    by_kind: dict[str, list[float]] = {}
    for r in results:
        for kind, ms in zip(r.kinds, r.latencies, strict=True):
            by_kind.setdefault(kind, []).append(ms)
    p95_by_kind = {kind: round(percentile(sorted(ms), 0.95), 1) for kind, ms in sorted(by_kind.items())}
    return {
        "clients": clients, "servers": len(urls), "elapsed_s": round(elapsed, 2), "ended": ended, "calls": calls,
        "per_second": round(calls / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(percentile(latencies, 0.50), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1), "p95_ms_by_verb": p95_by_kind,
        "facts": [f for r in results for f in r.facts], "pages": [p for r in results for p in r.pages],
        "errors": sorted((e for r in results for e in r.errors), key=lambda e: e[0]),
    }


def verify(home: Path, run: str, facts: list[tuple[str, str]], pages: list[str]) -> dict:
    """The brain against the acknowledgements: every acknowledged fact stored once, under the id it
    was acknowledged with; nothing of the run's stored that no client was told of; every
    acknowledged page there."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))
    brain = runtime.open_brain()
    try:
        mark = "?" if brain.backend == "sqlite" else "%s"
        rows = brain.query(f"SELECT id, fact FROM facts WHERE provenance = {mark} AND fact LIKE {mark}", (PROVENANCE, run + " %"))
        slugs = {r[0] for r in brain.query(f"SELECT slug FROM pages WHERE slug LIKE {mark} AND deleted_at IS NULL",
                                           (f"notes/{run}-%",))}
    finally:
        brain.close()
        runtime.close()
    stored = {(r[1], str(r[0])) for r in rows}
    texts = [r[1] for r in rows]
    acked = set(facts)
    return {
        "acknowledged": len(acked), "stored": len(rows),
        "lost": len(acked - stored),
        "duplicated": len(texts) - len(set(texts)),
        "unacknowledged_extra": len({f for f, _ in stored} - {f for f, _ in acked}),
        "id_mismatch": len({f for f, _ in acked} & {f for f, _ in stored}) - len(acked & stored),
        "pages_acknowledged": len(set(pages)), "pages_lost": len(set(pages) - slugs),
    }
