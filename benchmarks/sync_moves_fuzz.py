"""The long moves fuzz run: tests/server/sync/test_sync_moves_fuzz.py's suite with many more examples, on
SQLite and on Postgres (a throwaway server, when one can be started), figures recorded.

    python -m benchmarks.sync_moves_fuzz                  # 300 examples per backend; writes its RESULTS.md section
    python -m benchmarks.sync_moves_fuzz --examples 50 --no-write --sqlite-only

Each example is two synced folders and a random run of creates, edits, atomic saves, moves into new and
existing folders (reported as one move or split into a delete and a create), renames of notes and folders,
deletes, watcher ticks, held deletes coming due, full passes, watchers killed mid-flight and restarted, and
a second host's folder at the same path syncing into the same brain. The bars fail the run before anything
is written: 0 versions of any note lost (each is in a file, a page, a page's history or a conflict), 0 facts
detached from their note, 0 pages of one host's folder deleted or taken over by the other's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.results_file import replace_section

BEGIN, END = "<!-- sync-moves-fuzz:begin -->", "<!-- sync-moves-fuzz:end -->"
ROOT = Path(__file__).resolve().parents[1]


def run_backend(name: str, url: str | None, examples: int, base: Path):
    """One backend's run: a home whose brain is SQLite, or the Postgres database at `url`."""
    import test_sync_moves_fuzz  # noqa: PLC0415
    from helpers import init_home  # noqa: PLC0415

    if url:
        os.environ["MEMVERBS_BRAIN__URL"] = url
    try:
        home = init_home(base / f"home-{name}")
        counter = iter(range(10**9))
        started = time.perf_counter()
        tally = test_sync_moves_fuzz.fuzz_moves(home, lambda: Path(tempfile.mkdtemp(dir=base, prefix=f"{name}{next(counter)}-")), examples)
        return tally, time.perf_counter() - started
    finally:
        os.environ.pop("MEMVERBS_BRAIN__URL", None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sync_moves_fuzz")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "server" / "sync")]
    load = os.getloadavg()[0]
    runs: list[tuple[str, object, float]] = []
    with tempfile.TemporaryDirectory(prefix="memverbs-moves-fuzz-") as tmp:
        base = Path(tmp)
        tally, seconds = run_backend("sqlite", None, args.examples, base)
        runs.append(("SQLite", tally, seconds))
        if not args.sqlite_only:
            import postgres  # noqa: PLC0415

            server = postgres.start_pgserver() or postgres.start_distro()
            if server is not None:
                postgres._configure(server)  # the test servers' own set-up
                try:
                    url = server.new_database()
                    tally, seconds = run_backend("postgres", url, args.examples, base)
                    runs.append(("Postgres", tally, seconds))
                finally:
                    server.stop()  # type: ignore[operator]
            else:
                print("no Postgres server could be started: SQLite only", file=sys.stderr)

    def listed(counter: Counter) -> str:
        return ", ".join(f"{k} {n}" for k, n in sorted(counter.items(), key=lambda kv: -kv[1]) if n)

    rows = []
    for name, t, seconds in runs:
        rows += [
            f"| {name}: cases (two fresh folders each) | {t.cases} ({seconds:.0f} s) |",
            f"| {name}: operations drawn (one with no note to act on does nothing) | {sum(t.ops.values())}: {listed(t.ops)} |",
            f"| {name}: pass and tick outcomes, per file | {listed(t.outcomes)} |",
            f"| {name}: note versions memverbs saw, each looked for | {t.versions} |",
            f"| {name}: versions lost / facts detached / other host's damage | {t.lost_text} / {t.detached_facts} / {t.other_host_damage} |",
        ]
    for row in rows:
        print(row)
    bad = [t for _n, t, _s in runs if t.lost_text or t.detached_facts or t.other_host_damage]
    if bad:
        print("FAILED: " + "; ".join(bad[0].why[:5]), file=sys.stderr)
        return 1
    section = "\n".join([
        BEGIN,
        "## Sync you can trust in a team: moves, folder identity, two hosts (`python -m benchmarks.sync_moves_fuzz`)",
        "",
        f"{args.examples} hypothesis examples per backend (up to 25 operations each), each two synced folders (one with no prefix, one with "
        "`--prefix b`) and a random run of creates, edits, atomic saves, moves into new and existing folders (reported "
        "as one move event, or split into a delete and a create as inotify does for a move into a folder made a moment "
        "before), renames of notes and folders, deletes, watcher ticks, held deletes coming due, full passes, watchers "
        "killed mid-flight and restarted, and a second host's folder at the first folder's very path syncing into the "
        "same brain. The run fails on any lost version, detached fact or damage by the other host, so the zero rows are "
        "checked, not assumed. The default `pytest` runs the same suite with 12 examples per backend. "
        f"Load average at the start: {load:.1f} (2 cores, shared).",
        "",
        "| measure | result |",
        "|---|---|",
        *rows,
        END,
    ])
    if not args.no_write:
        replace_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
