"""The private-rows and inspector-actions property tests, run long, their figures recorded.

    python -m benchmarks.privacy_fuzz                     # 300 examples per part; writes its RESULTS.md section
    python -m benchmarks.privacy_fuzz --examples 40 --no-write

Parts (each a fresh SQLite home; the suites themselves also run on Postgres in `pytest`):

* dispatcher: tests/server/test_private_rows_fuzz.py's examples, every read tool as an untrusted
  caller with `search.remote_private_pages` off and on, plus an untrusted write-back;
* stdio: the same examples against a real `memverbs serve` over stdio (a tenth of the examples);
* inspector: tests/ui/test_ui_actions_fuzz.py's make private / make world / edit actions.

Any leak, `internal` or wrongly parsed page fails the run (an assertion) before anything is
written, so the zero columns are checked, not assumed.
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

BEGIN, END = "<!-- privacy-fuzz:begin -->", "<!-- privacy-fuzz:end -->"
ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.privacy_fuzz")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "server"), str(ROOT / "tests" / "ui")]
    import test_private_rows_fuzz as rows  # noqa: PLC0415
    import test_ui_actions_fuzz as actions  # noqa: PLC0415
    from helpers import Client, init_home  # noqa: PLC0415

    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    lines = []
    for part in ("dispatcher", "stdio", "inspector"):
        with tempfile.TemporaryDirectory(prefix="memverbs-privacy-fuzz-") as tmp:
            home = init_home(Path(tmp) / "home")
            os.environ["MEMVERBS_HOME"] = str(home.root)
            os.environ.pop("MEMVERBS_REMOTE_PRIVATE_PAGES", None)
            runtime = Runtime(home)
            local = Client(runtime.local_dispatcher())
            started = time.perf_counter()
            try:
                if part == "dispatcher":
                    closed = Client(runtime.mcp_dispatcher("full"))
                    os.environ["MEMVERBS_REMOTE_PRIVATE_PAGES"] = "1"
                    opened = Client(runtime.mcp_dispatcher("full"))
                    os.environ.pop("MEMVERBS_REMOTE_PRIVATE_PAGES")
                    readers = {"dispatcher": rows.dispatcher_reader(closed), "dispatcher opened": rows.dispatcher_reader(opened)}
                    tally = rows.fuzz_dispatcher(local, readers, args.examples)
                    cases, calls, leaks, outcomes = tally.examples, tally.calls, len(tally.leaks), tally.outcomes
                elif part == "stdio":
                    tally = rows.fuzz_stdio(memverbs_cmd(), dict(os.environ), local, max(2, args.examples // 10))
                    cases, calls, leaks, outcomes = tally.examples, tally.calls, len(tally.leaks), tally.outcomes
                else:
                    from memverbs.ui.app import InspectorApp  # noqa: PLC0415

                    app = InspectorApp()
                    try:
                        acts = actions.fuzz_actions(app, args.examples)
                    finally:
                        app.close()
                    cases, calls, leaks, outcomes = acts.cases, acts.cases, 0, acts.outcomes
            finally:
                runtime.close()
            seconds = time.perf_counter() - started
        internal = outcomes.get("internal", 0)
        assert leaks == 0 and internal == 0, (part, leaks, outcomes)
        shown = ", ".join(f"{code} {n}" for code, n in sorted(outcomes.items(), key=lambda kv: -kv[1]))
        lines.append(f"| {part} | {cases} | {calls} | {seconds:.0f} s | {leaks} | {internal} | {shown} |")
        print(lines[-1])
    section = "\n".join([
        BEGIN,
        "## Hardening round 2: private rows and page visibility under fuzz (`python -m benchmarks.privacy_fuzz`)",
        "",
        f"Hypothesis examples on SQLite ({args.examples} per part; stdio a tenth). *dispatcher*: each example writes 1–3 "
        "random pages (world or private) whose facts fences hold random world and private rows (`[private]` in any "
        "case, any bullet, continuation lines, `[[links]]` and markdown links to existing and missing pages, dated "
        "lines under a Timeline heading, LF or CRLF), then calls every read tool as an untrusted caller, with "
        "`search.remote_private_pages` off and on, and writes back what it read; a *leak* is a private-row token (or, "
        "when closed, a private-page token) in any reply, or a backlink or in-edge the world text does not hold. "
        "*stdio*: the same against a real `memverbs serve`. *inspector*: make private / make world / edit on random "
        "frontmatter (visibility keys in any case, quoted, repeated, across lines, in flow mappings); a leak there is "
        "a stored page whose parsed visibility is not the one intended. `calls` counts replies checked. The default "
        "`pytest` runs the same suites with 12 examples (inspector 48); the dispatcher part on SQLite and Postgres.",
        "",
        "| part | cases | calls | wall | leaks | internal | outcomes |",
        "|---|---|---|---|---|---|---|",
        *lines,
        END,
    ])
    if not args.no_write:
        replace_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
