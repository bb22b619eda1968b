"""The long fuzz run: tests/server/transport/test_fuzz.py's suite with many more examples, figures recorded.

    python -m benchmarks.fuzz                    # 2000 examples per transport and on the OAuth routes; writes RESULTS.md
    python -m benchmarks.fuzz --examples 300 --no-write
    python -m benchmarks.fuzz --parts oauth      # only the OAuth routes (test_oauth_fuzz.py), its own section

Each transport gets a fresh brain seeded with private facts and pages that
carry a canary. Reported: calls answered, outcomes by code (tool error codes,
JSON-RPC error codes, HTTP statuses), and the bars: 0 `internal`, 0
unanswered, 0 crashes (the server answers afterwards and exits 0), 0 private
leaks, `PRAGMA integrity_check` clean. Any breach fails the run (an assertion)
before anything is written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.processes import memverbs_cmd
from benchmarks.results_file import replace_section

BEGIN, END = "<!-- fuzz:begin -->", "<!-- fuzz:end -->"
OAUTH_BEGIN, OAUTH_END = "<!-- oauth-fuzz:begin -->", "<!-- oauth-fuzz:end -->"
ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz")
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--parts", default="stdio,http,oauth")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "server" / "transport")]
    import test_fuzz  # noqa: PLC0415
    from helpers import init_home  # noqa: PLC0415

    parts = args.parts.split(",")
    if "oauth" in parts:
        oauth_fuzz(args.examples, write=not args.no_write)
    transports = [t for t in ("stdio", "http") if t in parts]
    if not transports:
        return 0
    rows = []
    for transport in transports:
        with tempfile.TemporaryDirectory(prefix="memverbs-fuzz-") as tmp:
            home = init_home(Path(tmp) / "home")
            env = {**os.environ, "MEMVERBS_HOME": str(home.root)}
            started = time.perf_counter()
            if transport == "stdio":
                tally = test_fuzz.fuzz_stdio(memverbs_cmd(), env, home, args.examples)
            else:
                tally = test_fuzz.fuzz_http(home, args.examples)
            seconds = time.perf_counter() - started
        outcomes = ", ".join(f"{code} {n}" for code, n in sorted(tally.outcomes.items(), key=lambda kv: -kv[1]))
        rows.append(f"| {transport} | {tally.calls} | {seconds:.0f} s | {tally.outcomes.get('internal', 0)} | 0 | 0 | 0 | {outcomes} |")
        print(rows[-1])
    section = "\n".join([
        BEGIN,
        "## Fuzz: the full surface under hostile input (`python -m benchmarks.fuzz`)",
        "",
        f"{args.examples} hypothesis examples per transport, each a `tools/call` of a random tool with schema-drawn and "
        "hostile arguments (lone surrogates, line separators, NUL, huge numbers, wrong types, unknown keys) or a raw "
        "malformed frame, against a brain seeded with private facts and pages carrying a canary. The run fails on any "
        "`internal`, unanswered request, crash, canary in a reply or integrity-check failure, so the zero columns "
        "are checked, not assumed. The default `pytest` runs the same suite with 60 examples per transport.",
        "",
        "| transport | requests answered | wall | internal | unanswered | crashes | private leaks | outcomes by code |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        END,
    ])
    if not args.no_write:
        replace_section(BEGIN, END, section)
    return 0


def oauth_fuzz(examples: int, *, write: bool) -> None:
    """test_oauth_fuzz.py's suite with `examples` requests, its figures in their own section."""
    import test_oauth_fuzz  # noqa: PLC0415
    from helpers import init_home  # noqa: PLC0415

    from benchmarks.http_load import machine  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="memverbs-fuzz-oauth-") as tmp:
        home = init_home(Path(tmp) / "home")
        started = time.perf_counter()
        tally = test_oauth_fuzz.fuzz_oauth(home, examples)
        seconds = time.perf_counter() - started
    by_route: dict[str, dict[str, int]] = {}
    for key, n in tally.outcomes.items():
        route, status = key.rsplit(" ", 1)
        by_route.setdefault(route, {})[status] = n
    rows = [f"| `{route}` | {sum(c.values())} | {', '.join(f'{k}: {v}' for k, v in sorted(c.items()))} |"
            for route, c in sorted(by_route.items())]
    print("\n".join(rows))
    m = machine()
    section = "\n".join([
        OAUTH_BEGIN,
        "## Fuzz: the OAuth routes under hostile requests (`python -m benchmarks.fuzz --parts oauth`)",
        "",
        f"{tally.calls} hypothesis examples ({m['date']}, {seconds:.0f} s on a shared machine), each one request to "
        "`/register`, `/authorize`, `/consent`, `/token`, `/revoke` or a metadata document: a method, a form, JSON or raw "
        "bytes drawn from the fields each route reads and hostile values (oversized text, NUL, lone surrogates, wrong "
        "types, forged credentials, redirect URIs of every shape), from an address of its own, against a real "
        "`serve --http` whose brain holds an owner password and a private page with a canary. The run fails on any "
        "status of 500 or above, a traceback, an answer over 64 KiB, the canary in an answer, a server that no longer "
        "answers, OAuth tables past their bounds (clients, stored metadata, pending requests) or a failed integrity "
        "check, so the zeros are checked, not assumed: 0 of each. The default `pytest` runs the same suite with 60 "
        "examples.",
        "",
        "| route | requests | answers by status |",
        "|---|---|---|",
        *rows,
        OAUTH_END,
    ])
    if write:
        replace_section(OAUTH_BEGIN, OAUTH_END, section)


if __name__ == "__main__":
    raise SystemExit(main())
