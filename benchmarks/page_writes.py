"""Link-heavy page writes over HTTP: put_page with 12 links at 4 writers per server, SQLite beside
Postgres in one run.

    python -m benchmarks.page_writes                 # 20k grown corpus, 10 s per setup; writes its RESULTS.md section
    python -m benchmarks.page_writes --size smoke --seconds 3 --no-write

A team's notes link: each page a writer puts links 12 notes — 8 by slug (`[[people/target-person-3]]`,
`[[filler/page-812]]`) and 4 by name (`[[Target Person 7]]`, `[[Filler 90]]`), the way people write
them, so each save resolves its links (the reads a page write makes under the brain-wide write lock)
and stores them. Setups, on the same grown corpus (benchmarks/two_hosts.py's `prepare`: the corpus
copied into a throwaway pgserver with `migrate`'s transfer):

* **SQLite, 1 server, 4 writers** — what the Postgres figure is held against;
* **Postgres, 1 server, 4 writers** — the target: at least 0.8× SQLite's pages per second;
* **Postgres, 2 servers, 8 writers** (4 per server) — a team behind a load balancer.

The setups run one after another in the same process on the same machine, so a loaded machine slows
all of them; the ratio is the figure to read, and a quiet machine's run is the one to quote. Each
setup is verified by counting: every acknowledged page is stored with its 12 links resolved as the
rule resolves them (the named ones to their slugs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from benchmarks.corpus import SIZES
from benchmarks.http_load import HEADERS, call_body, make_token, percentile, tool_reply
from benchmarks.results_file import replace_section
from benchmarks.two_hosts import BenchFailure, Servers, prepare

BEGIN, END = "<!-- page-writes:begin -->", "<!-- page-writes:end -->"
WRITERS_PER_SERVER = 4
LINKS = 12
SECONDS = 10.0
CAP_PER_CLIENT = 2_000
WARMUP_CALLS = 2
SETUPS = (("sqlite_1", 1), ("postgres_1", 1), ("postgres_2", 2))
TARGET_RATIO = 0.8


def page_text(run: str, client: int, n: int, pages: int, targets: int) -> tuple[str, set[str]]:
    """A note that links 12 others (8 by slug, 4 by name), and the slugs those links resolve to."""
    k = client * 1009 + n * 31
    by_slug = [f"people/target-person-{(k + j) % targets}" for j in range(4)]
    by_slug += [f"filler/page-{(k * 7 + j * 13) % pages + 1}" for j in range(4)]
    named = [(f"Target Person {(k + 11 + j) % targets}", f"people/target-person-{(k + 11 + j) % targets}") for j in range(2)]
    named += [(f"Filler {(k * 3 + j * 17) % pages + 1}", f"filler/page-{(k * 3 + j * 17) % pages + 1}") for j in range(2)]
    links = " ".join(f"[[{s}]]" for s in by_slug) + " " + " ".join(f"[[{name}]]" for name, _ in named)
    text = f"---\ntitle: {run} note {client}-{n}\n---\n# {run} note {client}-{n}\n\nSee {links}.\n"
    return text, set(by_slug) | {slug for _, slug in named}


def _writer(url: str, token: str, client: int, run: str, sizes: tuple[int, int], clock: dict, out: dict) -> None:
    import httpx  # noqa: PLC0415

    acked: list[tuple[str, set[str]]] = []
    latencies: list[float] = []
    errors: list[str] = []
    with httpx.Client(timeout=60, headers={**HEADERS, "Authorization": f"Bearer {token}"}) as http:
        for n in range(CAP_PER_CLIENT):
            if n == WARMUP_CALLS:
                clock["start"].wait(timeout=120)
                latencies.clear()
            if n >= WARMUP_CALLS and time.monotonic() >= clock["end"]:
                break
            slug = f"bench/{run}-c{client}-{n}"
            text, targets = page_text(run, client, n, *sizes)
            started = time.perf_counter()
            response = http.post(url, json=call_body(n, "put_page", {"slug": slug, "content": text}))
            latencies.append((time.perf_counter() - started) * 1000)
            try:
                result, payload = tool_reply(response)
            except ValueError as exc:
                errors.append(str(exc))
                continue
            if result.get("isError") or payload.get("status") != "created" or payload.get("links") != LINKS:
                errors.append(json.dumps(payload)[:200])
                continue
            acked.append((slug, targets))
    out[client] = {"acked": acked, "latencies": latencies, "errors": errors}


def run_writers(urls: list[str], token: str, seconds: float, run: str, sizes: tuple[int, int]) -> dict:
    clients = WRITERS_PER_SERVER * len(urls)
    out: dict[int, dict] = {}
    clock: dict = {"end": float("inf")}

    def start() -> None:
        clock["started"] = time.monotonic()
        clock["end"] = clock["started"] + seconds

    clock["start"] = threading.Barrier(clients, action=start)
    threads = [threading.Thread(target=_writer, args=(urls[c % len(urls)], token, c, run, sizes, clock, out))
               for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - clock.get("started", time.monotonic())
    latencies = sorted(ms for c in out.values() for ms in c["latencies"])
    return {"clients": clients, "acked": [a for c in sorted(out) for a in out[c]["acked"]], "timed": len(latencies),
            "errors": [e for c in out.values() for e in c["errors"]], "elapsed_s": round(elapsed, 2),
            "p50_ms": round(percentile(latencies, 0.50), 1), "p95_ms": round(percentile(latencies, 0.95), 1)}


def verify(home: Path, acked: list[tuple[str, set[str]]]) -> dict:
    """Every acknowledged page is stored, with its links resolved to the slugs they name."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))
    brain = runtime.open_brain()
    missing = wrong = 0
    try:
        for slug, targets in acked:
            if brain.page("default", slug) is None:
                missing += 1
            elif {r["to_slug"] for r in brain.page_links("default", slug, allow_private=True, private_rows=True)} != targets:
                wrong += 1
    finally:
        brain.close()
        runtime.close()
    if missing or wrong:
        raise BenchFailure(f"{missing} acknowledged pages missing, {wrong} with links other than their names")
    return {"pages": len(acked), "missing": 0, "links_wrong": 0}


def run(size: str, seconds: float) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="memverbs-bench-page-writes-"))
    server = None
    results: dict = {"size": size, "seconds": seconds, "date": time.strftime("%Y-%m-%d %H:%M"), "nproc": os.cpu_count(),
                     "load_start": round(os.getloadavg()[0], 2), "setups": {}}
    spec = SIZES[size]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    try:
        sqlite_home, pg_home, server = prepare(size, tmp, None)
        for key, count in SETUPS:
            home = pg_home if key.startswith("postgres") else sqlite_home
            print(f"[page-writes] {key}: {WRITERS_PER_SERVER * count} writers over {count} server(s), {seconds:g} s",
                  file=sys.stderr)
            token = make_token(home, f"bench-{uuid.uuid4().hex[:8]}")
            run_id = f"r{uuid.uuid4().hex[:8]}"
            with Servers(home, env, count) as running:
                got = run_writers([s.url for s in running], token, seconds, run_id, (spec.pages, spec.targets))
            if got["errors"]:
                raise BenchFailure(f"{key}: {len(got['errors'])} page writes failed, e.g. {got['errors'][0]}")
            results["setups"][key] = {
                "servers": count, "writers": got["clients"], "pages": got["timed"],
                "per_second": round(got["timed"] / got["elapsed_s"], 1) if got["elapsed_s"] else 0.0,
                "p50_ms": got["p50_ms"], "p95_ms": got["p95_ms"], "verified": verify(home, got["acked"]),
                "load_after": round(os.getloadavg()[0], 2),
            }
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    results["load_end"] = round(os.getloadavg()[0], 2)
    return results


LABELS = {"sqlite_1": "SQLite, 1 server", "postgres_1": "Postgres, 1 server", "postgres_2": "Postgres, 2 servers"}


def markdown(r: dict) -> str:
    s = r["setups"]
    lines = [
        BEGIN,
        "## Link-heavy page writes, SQLite beside Postgres (`python -m benchmarks.page_writes`)",
        "",
        f"Measured {r['date']} on {r['nproc']} cores shared with other work (1-minute load average {r['load_start']} at "
        f"the start, {r['load_end']} at the end), on the {r['size']} grown corpus: {WRITERS_PER_SERVER} MCP writers per "
        f"`serve --http` process, each putting new pages that link {LINKS} notes (8 by slug, 4 by name) for "
        f"{r['seconds']:g} s. Every acknowledged page is verified stored with its links resolved.",
        "",
        "| setup | writers | pages | pages/s | p50 ms | p95 ms | load after |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in LABELS.items():
        if key in s:
            x = s[key]
            lines.append(f"| {label} | {x['writers']} | {x['pages']:,} | {x['per_second']} | {x['p50_ms']} | {x['p95_ms']} | "
                         f"{x['load_after']} |")
    if "postgres_1" in s and "sqlite_1" in s and s["sqlite_1"]["per_second"]:
        ratio = s["postgres_1"]["per_second"] / s["sqlite_1"]["per_second"]
        verdict = "met" if ratio >= TARGET_RATIO else "**missed**"
        lines += ["", f"Target: Postgres at 4 writers per server ≥ {TARGET_RATIO}× SQLite's rate: {ratio:.2f}× — {verdict} "
                      "(both measured in this run, on the same loaded machine; the lead re-runs it on a quiet one)."]
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page_writes", description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="20k", choices=sorted(SIZES), help="the grown corpus (default 20k)")
    parser.add_argument("--seconds", type=float, default=SECONDS, help="how long each setup writes (default 10)")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    try:
        results = run(args.size, args.seconds)
    except BenchFailure as exc:
        print(f"page_writes: FAILED: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(results, indent=2))
    if not args.no_write:
        replace_section(BEGIN, END, markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
