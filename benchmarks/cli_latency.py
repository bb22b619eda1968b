"""How long the CLI's read commands take, as a person at a terminal waits for them:
`python -m benchmarks.cli_latency [--before DIR] [--runs N]`.

Each run is a cold `memverbs` process from exec to exit (start-up, the argument parser, the config,
opening the brain, the read, the rendering, teardown) on a brain of 10,000 facts grown through the
tools (benchmarks/corpus.py: 5,000 pages, 25,000 links, 10,000 facts; cached under
benchmarks/.cache/). The commands: `entity`, `recall --entity`, `recall --query`, `search`, `stats`
and `list-pages`, each checked for the answer it should print (a run that printed nothing measured
nothing).

The rows are the console script a user runs (`memverbs …`, this checkout) and, to compare two trees
on one interpreter, the CLI's entry point started from a checkout (`python -c 'sys.path.insert(0,
DIR); …main()'`): this one, and with `--before DIR` another (say `git archive <commit> | tar -x -C
DIR`). Rounds interleave every (launch, command) pair, so a load that drifts weighs on every column
alike. Reports the median and fastest wall and CPU (user + system of the reaped child, which moves
little with load) and the 1-minute load; writes the `cli-latency` section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpus, processes
from benchmarks.results_file import replace_section

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
SIZE = corpus.size_of("cli-10k", 5_000)  # 10,000 facts (corpus.size_of: twice the pages)
BEGIN, END = "<!-- cli-latency:begin -->", "<!-- cli-latency:end -->"
TARGET_S = 0.150  # median wall of a read command on a quiet machine
LATEST = HERE / "results" / "cli-latest.json"

# (label, arguments, what its output must hold)
COMMANDS = (
    ("entity", ["entity", "people/target-person-3"], "Target Person 3"),
    ("recall --entity", ["recall", "--entity", "people/target-person-3"], "target fact 20 about person 3"),
    ("recall --query", ["recall", "--query", "target person 3 commitment"], "about person 3"),
    ("search", ["search", "target person"], "people/target-person-"),
    ("stats", ["stats"], "facts"),
    ("list-pages", ["list-pages"], "filler/page-"),
)


def from_checkout(checkout: Path) -> list[str]:
    """The CLI's entry point, imported from `checkout` (the same interpreter and packages for every tree)."""
    code = f"import sys;sys.path.insert(0,{str(checkout)!r});from memverbs.cli.main import main;sys.exit(main())"
    return [sys.executable, "-c", code]


def _run(argv: list[str], env: dict) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd="/")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[-3:]} exited {proc.returncode}: {proc.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def measure(launches: dict[str, list[str]], home: Path, runs: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON"))}
    env.update(MEMVERBS_HOME=str(home), NO_COLOR="1")
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    for prefix in launches.values():  # one unmeasured run each: the bytecode caches are written
        for _, args, _ in COMMANDS:
            _run([*prefix, *args], env)
    load = [os.getloadavg()[0]]
    for _ in range(runs):
        for launch, prefix in launches.items():
            for label, args, expect in COMMANDS:
                wall, cpu, out = _run([*prefix, *args], env)
                if expect not in out:
                    raise RuntimeError(f"{launch}: `memverbs {' '.join(args)}` printed no {expect!r}")
                cell = cells.setdefault((launch, label), {"wall": [], "cpu": []})
                cell["wall"].append(wall)
                cell["cpu"].append(cpu)
    load.append(os.getloadavg()[0])
    return {
        "load_1min": [round(x, 2) for x in load],
        "runs": runs,
        "rows": [
            {"launch": launch, "command": label,
             "wall_ms_p50": round(1000 * statistics.median(c["wall"]), 1), "wall_ms_min": round(1000 * min(c["wall"]), 1),
             "cpu_ms_p50": round(1000 * statistics.median(c["cpu"]), 1), "cpu_ms_min": round(1000 * min(c["cpu"]), 1)}
            for (launch, label), c in cells.items()
        ],
    }


def render(report: dict) -> str:
    launches = list(dict.fromkeys(r["launch"] for r in report["rows"]))
    by = {(r["launch"], r["command"]): r for r in report["rows"]}
    head = "| command | " + " | ".join(f"{launch}: wall p50 / min | CPU p50" for launch in launches) + " |"
    lines = [head, "|" + " --- |" * (1 + 2 * len(launches))]
    for label, _, _ in COMMANDS:
        cells = []
        for launch in launches:
            r = by[(launch, label)]
            cells.append(f"{r['wall_ms_p50']:.0f} / {r['wall_ms_min']:.0f} ms | {r['cpu_ms_p50']:.0f} ms")
        lines.append(f"| `{label}` | " + " | ".join(cells) + " |")
    m = report["machine"]
    return "\n".join([
        BEGIN,
        f"## CLI read commands (`python -m benchmarks.cli_latency`, {m['date']})",
        "",
        f"Cold `memverbs` processes, exec to exit, on a brain of {SIZE.facts:,} facts, {SIZE.pages + SIZE.targets:,} pages and "
        f"~{SIZE.links:,} links grown through the tools; {report['runs']} interleaved rounds; ms. Target: each read command "
        f"≤ {TARGET_S * 1000:.0f} ms median wall on a quiet machine. {m['nproc']} cores, Python {m['python']}, 1-minute load "
        f"{report['load_1min'][0]} → {report['load_1min'][1]}.",
        "",
        *lines,
        "",
        "CPU (user + system of the process) moves little with the machine's load; wall is what a person waits for.",
        *_compared(by, launches),
        END,
    ])


def _compared(by: dict, launches: list[str]) -> list[str]:
    """One line comparing this tree's CPU with the other tree's, command by command (when there is one)."""
    if "before" not in launches:
        return []
    ratios = [by[("this tree", label)]["cpu_ms_p50"] / by[("before", label)]["cpu_ms_p50"] for label, _, _ in COMMANDS]
    return ["", f"CPU of this tree against the other (`--before`), median per command: {min(ratios):.2f}–{max(ratios):.2f}×."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cli_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout of the repository, run interleaved with this one")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-write", action="store_true", help="print the section; leave RESULTS.md as it is")
    parser.add_argument("--render", action="store_true", help="rewrite the section from the last run's JSON; measure nothing")
    args = parser.parse_args(argv)
    if args.render:
        replace_section(BEGIN, END, render(json.loads(LATEST.read_text())))
        return 0
    launches = {"memverbs (console script)": [*processes.memverbs_cmd()], "this tree": from_checkout(CHECKOUT)}
    if args.before:
        launches["before"] = from_checkout(args.before.resolve())
    with tempfile.TemporaryDirectory(prefix="memverbs-cli-") as tmp:
        home = Path(tmp) / "home"
        corpus.working_copy(SIZE, home)
        report = measure(launches, home, args.runs)
    report["machine"] = {"nproc": os.cpu_count(), "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d")}
    LATEST.parent.mkdir(parents=True, exist_ok=True)
    LATEST.write_text(json.dumps(report, indent=2) + "\n")
    section = render(report)
    print(section)
    if not args.no_write:
        replace_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
