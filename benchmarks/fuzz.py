"""The long fuzz run: tests/server/transport/test_fuzz.py's suite with many more examples, figures recorded.

    python -m benchmarks.fuzz                    # 2000 examples per transport; writes its RESULTS.md section
    python -m benchmarks.fuzz --examples 300 --no-write

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
ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz")
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "transport")]
    import test_fuzz  # noqa: PLC0415
    from helpers import init_home  # noqa: PLC0415

    rows = []
    for transport in ("stdio", "http"):
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


if __name__ == "__main__":
    raise SystemExit(main())
