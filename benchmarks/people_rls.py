"""What row-level security costs a read (docs/postgres.md, "People and privacy").

    python -m benchmarks.people_rls [--pages 1500] [--rounds 100]

One Postgres brain (a throwaway `pgserver`), grown through the tools by its owner — a plain role, so
the people policies hold it — with pages that link, facts, private pages and private facts-fence
rows. The same calls (entity, search, get_page, recall, context_pack) are then made through the
in-process dispatcher twice over, interleaved: as the owner's CLI (policies applied) and as a
superuser's (policies bypassed, as they are for every superuser). The difference is what the
policies cost. Numbers from a shared, loaded machine are noisy: say so with them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "support")]

CALLS = (
    ("entity", lambda i: {"name": f"Topic {i}"}),
    ("search", lambda i: {"query": f"alpha{i % 50} beta"}),
    ("get_page", lambda i: {"slug": f"topics/t{i}"}),
    ("recall", lambda i: {"query": f"alpha{i % 50}"}),
    ("context_pack", lambda i: {"entities": f"topics/t{i}"}),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()

    import psycopg  # noqa: PLC0415
    from helpers import init_home  # noqa: PLC0415
    from postgres import start_pgserver  # noqa: PLC0415

    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    server = start_pgserver()
    if server is None:
        print("no pgserver wheel on this machine", file=sys.stderr)
        return 1
    runtimes: dict[str, Runtime] = {}
    try:
        server.admin("CREATE ROLE bench_owner LOGIN")
        server.admin("CREATE DATABASE bench OWNER bench_owner TEMPLATE template0")
        with psycopg.connect(server.url("bench"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for who, user in (("policies", "bench_owner"), ("bypassed", "postgres")):
            root = Path(tempfile.mkdtemp()) / "home"
            os.environ["MEMVERBS_BRAIN__URL"] = server.url("bench", user=user)
            init_home(root)
            runtimes[who] = Runtime(Home(root))
        local = runtimes["policies"].local_dispatcher()
        started = time.perf_counter()
        n = args.pages
        for i in range(n):
            links = " ".join(f"[[topics/t{random.randrange(n)}]]" for _ in range(5))
            visibility = "private" if i % 10 == 0 else "world"
            local.call("put_page", {"slug": f"topics/t{i}", "content": (
                f"---\ntitle: Topic {i}\nvisibility: {visibility}\n---\n# Topic {i}\n\nabout alpha{i % 50} beta {links}\n\n"
                f"<!-- facts -->\n- [private] p{i} [[topics/t{(i * 7) % n}]]\n- w{i}\n<!-- /facts -->\n")})
            if i % 4 == 0:
                local.call("remember", {"fact": f"fact {i} alpha{i % 50}", "kind": "belief", "entity": f"topics/t{i}",
                                        "provenance": "bench", "visibility": visibility})
        print(f"grown: {n} pages, {n // 4} facts in {time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.1f}")
        dispatchers = {who: rt.local_dispatcher() for who, rt in runtimes.items()}
        took: dict[tuple[str, str], list[float]] = {(w, c): [] for w in dispatchers for c, _ in CALLS}
        for r in range(args.rounds):
            i = random.randrange(n)
            for name, params in CALLS:
                for who in ("policies", "bypassed") if r % 2 else ("bypassed", "policies"):
                    at = time.perf_counter()
                    out = dispatchers[who].call(name, params(i))
                    took[(who, name)].append((time.perf_counter() - at) * 1000)
                    assert not out.is_error, out.body
        print(f"{'call':13s} {'p50 policies':>13s} {'p50 bypassed':>13s} {'p95 policies':>13s} {'p95 bypassed':>13s}")
        for name, _ in CALLS:
            a, b = sorted(took[("policies", name)]), sorted(took[("bypassed", name)])
            print(f"{name:13s} {statistics.median(a):10.1f} ms {statistics.median(b):10.1f} ms "
                  f"{a[int(len(a) * 0.95)]:10.1f} ms {b[int(len(b) * 0.95)]:10.1f} ms")
        print(f"load at the end: {os.getloadavg()[0]:.1f}")
    finally:
        for rt in runtimes.values():
            rt.close()
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
