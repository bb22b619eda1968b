"""Recall with a query on Postgres: the ranked facts arm and recall over the op layer.

    python -m benchmarks.postgres_recall [--facts 1k 10k] [--url postgresql://…] [--calls 200] [--explain]

The benchmark corpus (benchmarks/corpus.py: 2,000 facts at `1k`, 10,000 at `10k`) is grown
through the tools into a SQLite brain and copied to Postgres with `migrate`'s transfer, as
benchmarks/backends.py does. Then, on the Postgres brain:

* ranked arm: `facts_ranked` (the store's BM25 statement alone) for queries that match every
  fact ("noise fact 17": two terms every noise fact holds, one rare), a handful, or none;
* recall: the `recall` verb with that query, in-process as an MCP caller (the world view).

Without --url it starts a throwaway server with the `pgserver` wheel. `--explain` prints the
ranked statement's EXPLAIN ANALYZE once per size. Numbers from a shared machine are noisy: the
1-minute load is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.corpus import SIZES, grown_home, size_of
from benchmarks.verbs import percentiles

FACT_SIZES = {"1k": SIZES["1k"], "10k": size_of("10k", 5_000)}  # 2,000 and 10,000 facts
QUERIES = ("noise fact 17", "target fact about person 3", "person 12 commitment", "zebra quokka")


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def measure(home: Path, url: str, calls: int, explain: bool) -> dict:
    from memverbs.server.brain.base import FactFilter, SearchQuery  # noqa: PLC0415
    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.brain.location import BrainLocation  # noqa: PLC0415
    from memverbs.server.context import Caller  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.terms import query_terms  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    brain = open_brain(BrainLocation("postgres", url=url))
    results: dict = {}
    try:
        for q in QUERIES:
            search = SearchQuery.of(tuple(query_terms(q)), "any")
            pool = FactFilter("recent", now_ms(), True, True, 20)
            if explain:
                where, args = brain.fact_where("default", pool)
                terms = brain.dialect.ranked_terms(search)
                sql = "EXPLAIN (ANALYZE, BUFFERS) " + brain.dialect.facts_ranked(where, terms)
                plan = brain.query(sql, (*terms, *args, 20))
                print(f"-- {q!r}\n" + "\n".join(r[0] for r in plan), file=sys.stderr)
            brain.facts_ranked("default", pool, search, limit=20)  # warm
            samples = []
            for _ in range(calls):
                started = time.perf_counter()
                brain.facts_ranked("default", pool, search, limit=20)
                samples.append((time.perf_counter() - started) * 1000)
            results[f"ranked {q!r}"] = percentiles(samples)
    finally:
        brain.close()

    os.environ["MEMVERBS_BRAIN__URL"] = url
    runtime = Runtime(Home(home))
    remote = runtime.mcp_dispatcher("verbs", Caller.mcp("default"))
    remote.on_call = None
    try:
        samples = []
        for k in range(calls + 10):
            started = time.perf_counter()
            outcome = remote.call("recall", {"query": QUERIES[k % len(QUERIES)], "limit": 10})
            ms = (time.perf_counter() - started) * 1000
            if outcome.is_error:
                raise AssertionError(f"recall failed: {outcome.body}")
            if k >= 10:
                samples.append(ms)
        results["recall (op layer)"] = percentiles(samples)
    finally:
        runtime.close()
        os.environ.pop("MEMVERBS_BRAIN__URL", None)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", nargs="+", default=["1k", "10k"], choices=sorted(FACT_SIZES))
    parser.add_argument("--url", help="a Postgres server's URL (an empty database is made per size); default: a pgserver")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--vacuum", action="store_true", help="VACUUM ANALYZE the copied brain before measuring")
    args = parser.parse_args(argv)

    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.brain.location import BrainLocation  # noqa: PLC0415
    from memverbs.server.brain.transfer import transfer  # noqa: PLC0415

    server = None
    if args.url is None:
        import pgserver  # noqa: PLC0415

        server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="memverbs-bench-pg-")), cleanup_mode="delete")
    out: dict = {"load_1min_before": _load()}
    try:
        for name in args.facts:
            size = FACT_SIZES[name]
            home = Path(tempfile.mkdtemp(prefix="memverbs-bench-pgrecall-")) / "home"
            shutil.copytree(grown_home(size), home, ignore=shutil.ignore_patterns(".grown"))
            db = f"recall_{name}"
            if server is not None:
                server.psql(f"CREATE DATABASE {db}")
                url = server.get_uri(db)
            else:
                url = args.url
            open_brain(BrainLocation("sqlite", path=home / "brain.db")).close()  # a cached corpus may be a schema step behind
            source = open_brain(BrainLocation("sqlite", path=home / "brain.db"), read_only=True)
            target = open_brain(BrainLocation("postgres", url=url), create=True)
            report = transfer(source, target, resume=True)
            source.close()
            if args.vacuum:
                # As autovacuum leaves a brain in use: the GIN index's pending list merged, statistics read.
                with target.connection() as conn:  # autocommit: VACUUM runs outside a transaction
                    conn.execute("VACUUM ANALYZE")
            target.close()
            if not report.ok:
                raise AssertionError(f"the transfer of {name} failed")
            out[f"{size.facts} facts"] = measure(home, url, args.calls, args.explain)
            shutil.rmtree(home.parent, ignore_errors=True)
    finally:
        if server is not None:
            server.cleanup()
    out["load_1min_after"] = _load()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
