"""SQLite and Postgres side by side on the same grown corpus (docs/postgres.md).

    python -m benchmarks.backends [--size 20k] [--url postgresql://…]

* entity latency (p50/p99, the dispatcher in-process, a remote caller: the
  workload's entity calls, benchmarks/verbs.py) on the corpus grown through the
  tools (benchmarks/corpus.py), and on the same corpus copied to Postgres with
  `migrate`'s transfer (its time is reported too);
* remember throughput: 8 concurrent writers over 2 processes (4 threads each),
  on the SQLite file (one host) and on the Postgres brain.

Without --url it starts a throwaway server with the `pgserver` wheel (pgvector
included). Numbers from a shared, loaded machine are noisy: say so with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.corpus import SIZES, TARGETS, working_copy
from benchmarks.verbs import BenchError, Verb, measure, workload

WRITERS_PER_PROCESS = 4
PROCESSES = 2
WRITE_SECONDS = 10.0


def call(dispatcher, tool: str, args: dict) -> dict:
    outcome = dispatcher.call(tool, args)
    if outcome.is_error:
        raise BenchError(f"{tool} failed: {outcome.body}")
    return outcome.body


def entity_latency(home: Path, url: str | None) -> dict:
    from memverbs.server.context import Caller  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    if url:
        os.environ["MEMVERBS_BRAIN__URL"] = url
    else:
        os.environ.pop("MEMVERBS_BRAIN__URL", None)
    runtime = Runtime(Home(home))
    remote = runtime.mcp_dispatcher("verbs", Caller.mcp("default"))
    remote.on_call = None
    entity = next(v for v in workload("", targets=TARGETS) if v.name == "entity")  # its `since` is delta's only

    def timed(verb: Verb, k: int) -> tuple[dict, float]:
        args = verb.args(k)
        start = time.perf_counter()
        body = call(remote, verb.tool or "", args)
        return body, (time.perf_counter() - start) * 1000

    try:
        return measure([entity], timed)["entity"]
    finally:
        runtime.close()


def _writer_process(home: str, url: str, seconds: float, tag: str) -> None:
    """One process, WRITERS_PER_PROCESS threads remembering distinct facts until the clock runs out."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    if url:
        os.environ["MEMVERBS_BRAIN__URL"] = url
    runtime = Runtime(Home(Path(home)))
    end = time.monotonic() + seconds

    def writer(w: int) -> int:
        # SQLite: one connection per thread (as serve --http does); Postgres: threads share the pool.
        dispatcher = runtime.mcp_dispatcher("verbs", open_brain=runtime.open_brain)
        dispatcher.on_call = None
        n = 0
        while time.monotonic() < end:
            call(dispatcher, "remember", {"fact": f"bench {tag} {w} {n} {time.time_ns()}", "provenance": "bench",
                                          "entity": f"people/target-person-{n % TARGETS}"})
            n += 1
        return n

    with ThreadPoolExecutor(WRITERS_PER_PROCESS) as pool:
        total = sum(pool.map(writer, range(WRITERS_PER_PROCESS)))
    print(json.dumps({"writes": total}))


def remember_throughput(home: Path, url: str | None) -> dict:
    env = dict(os.environ)
    code = "import sys; from benchmarks.backends import _writer_process as w; w(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4])"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(home), url or "", str(WRITE_SECONDS), f"p{i}"],
                         env=env, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
        for i in range(PROCESSES)
    ]
    writes = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=WRITE_SECONDS * 10 + 120)
        if proc.returncode != 0:
            raise BenchError("a writer process failed")
        writes += json.loads(out.strip().splitlines()[-1])["writes"]
    return {"writers": PROCESSES * WRITERS_PER_PROCESS, "processes": PROCESSES, "seconds": WRITE_SECONDS,
            "writes": writes, "per_second": round(writes / WRITE_SECONDS, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="20k", choices=sorted(SIZES))
    parser.add_argument("--url", help="an empty Postgres database to copy the corpus into (default: a pgserver)")
    args = parser.parse_args(argv)

    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.brain.location import BrainLocation  # noqa: PLC0415
    from memverbs.server.brain.transfer import transfer  # noqa: PLC0415

    # A working copy: the writes below must not land in the cached corpus other benchmarks reuse.
    home = working_copy(SIZES[args.size], Path(tempfile.mkdtemp(prefix="memverbs-bench-backends-")) / "home")
    server = None
    url = args.url
    if url is None:
        import pgserver  # noqa: PLC0415

        server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="memverbs-bench-pg-")), cleanup_mode="delete")
        server.psql("CREATE DATABASE bench")
        url = server.get_uri("bench")
    try:
        results: dict = {"size": args.size}
        results["entity_sqlite"] = entity_latency(home, None)
        source = open_brain(BrainLocation("sqlite", path=home / "brain.db"), read_only=True)
        target = open_brain(BrainLocation("postgres", url=url), create=True)
        started = time.monotonic()
        report = transfer(source, target, resume=True)
        results["migrate_seconds"] = round(time.monotonic() - started, 1)
        results["migrate_ok"] = report.ok
        source.close()
        target.close()
        results["entity_postgres"] = entity_latency(home, url)
        results["entity_p99_ratio"] = round(results["entity_postgres"]["p99_ms"] / results["entity_sqlite"]["p99_ms"], 2)
        results["remember_sqlite"] = remember_throughput(home, None)
        results["remember_postgres"] = remember_throughput(home, url)
        print(json.dumps(results, indent=2))
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(home.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
