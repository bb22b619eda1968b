"""The per-prompt reflex's wall time on the installed command, and how it grows with the brain:
`python -m benchmarks.reflex_latency [--runs N]` (`build` first grows the brains, cached).

Two brains grown through memverbs's own tools (benchmarks/corpus.py's shape): a small one (300
entities, 1,000 facts) and the issue's large one (10,050 entities with 15,000 aliases, 100,000 facts).
Each prompt is one cold hook process started exactly as Claude Code starts it (the command `memverbs
install claude` writes, through a shell), fed a recorded `UserPromptSubmit` payload, in a session
whose delta cursor exists (nothing else changed: the answer is the reflex's alone). Every prompt
runs in a session of its own, so a named entity is always news: the worst case, a pointer to write.

Prompt kinds: one that names nothing; one naming a person by title; one naming two entities; a
lower-case alias; a long prompt (~150 words) naming one. Rounds interleave the two brains and the
kinds, so the machine's load drifts over both alike; the large/small ratio is the flatness figure.
Writes the `reflex-latency` section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpus
from benchmarks.results_file import replace_section

BEGIN, END = "<!-- reflex-latency:begin -->", "<!-- reflex-latency:end -->"
SMALL = corpus.Size("reflex-small", pages=300, links=1_500, aliases=450, facts=1_000, targets=8)
LARGE = corpus.Size("reflex-10k", pages=10_000, links=50_000, aliases=15_000, facts=100_000, targets=50)
TARGETS_MS = {"p50": 40, "p95": 80}
FILLER_WORDS = (
    "Before lunch I want the flaky integration test fixed, the retry wrapper simplified and the logging "
    "made quieter so the CI output is readable again. After that we should look at the migration script, "
    "check whether the new index helps the slow query, and write down what we learn in the notes. "
)


def prompts(size: corpus.Size, i: int) -> dict[str, str]:
    n, m, t = i * 37 % size.pages + 1, i * 91 % size.pages + 1, i % size.targets
    return {
        "names nothing": "Let's clean up the tests before lunch, nothing fancy.",
        "one person by title": f"What did Target Person {t} say about the launch plan?",
        "two entities": f"Compare Filler {n} with Filler {m} before the review.",
        "lower-case alias": f"ping tp{t} about the retro notes",
        "long prompt, one name": FILLER_WORDS + f"Also, what is the status of Filler {n}? " + FILLER_WORDS,
    }


def session_ids(home: Path, count: int, tag: str) -> list[str]:
    """`count` sessions with a delta cursor each (their first wake), as a session start leaves them."""
    call, close = corpus.in_process(home)
    ids = [f"bench-{tag}-{k}" for k in range(count)]
    try:
        for sid in ids:
            call("delta", {"session_id": sid})
    finally:
        close()
    return ids


def hook_cmd(home: Path) -> str:
    """The prompt hook's command `memverbs install claude` writes for this home, and its launcher file."""
    from memverbs.hooks.events import Harness  # noqa: PLC0415
    from memverbs.installers.base import Options, hook_command, launcher_step  # noqa: PLC0415
    from memverbs.installers.steps import Context  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415

    opts = Options(Harness.CLAUDE, home=Home(home), env={"MEMVERBS_HOME": str(home)})
    launcher_step(opts).apply(Context(backups=opts.home.backups / "bench"))
    return hook_command(opts, "heartbeat")


def one(cmd: str, home: Path, session: str, prompt: str) -> tuple[float, str, int]:
    payload = {"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(home), "prompt": prompt,
               "transcript_path": "/nonexistent.jsonl", "permission_mode": "default"}
    started = time.perf_counter()
    proc = subprocess.run(["/bin/sh", "-c", cmd], input=json.dumps(payload), capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMVERBS_HOME": str(home)})
    wall = time.perf_counter() - started
    log = (home / "logs" / "hooks.jsonl").read_text().splitlines()[-1]
    return wall, json.loads(log)["code"], len(proc.stdout)


def in_process(home: Path, size: corpus.Size, rounds: int = 200) -> dict[str, float]:
    """The reflex's reads alone, warm, on one connection (no process start): find the names, then read
    each named page and its facts. Median ms per prompt kind: the part of the cost the brain's size
    could move."""
    import sqlite3  # noqa: PLC0415

    from memverbs.server.brain.plain import PlainBrain  # noqa: PLC0415
    from memverbs.server.name_index import find  # noqa: PLC0415
    from memverbs.server.verbs.pointers import FACTS_READ  # noqa: PLC0415

    db = sqlite3.connect(f"file:{home / 'brain.db'}?mode=ro", uri=True)
    reads = PlainBrain(db)
    out = {}
    try:
        for kind, text in prompts(size, 3).items():
            walls = []
            for _ in range(rounds):
                started = time.perf_counter()
                named = find(text, lambda keys: reads.named(corpus.SOURCE, keys))
                if named.mentions:
                    reads.pages(corpus.SOURCE, named.slugs)
                    for slug in named.slugs:
                        reads.facts(corpus.SOURCE, slug, 2**62, FACTS_READ)
                walls.append(time.perf_counter() - started)
            out[kind] = round(statistics.median(walls) * 1000, 3)
    finally:
        db.close()
    return out


def run(runs: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="memverbs-reflex-"))
    try:
        homes = {s.name: corpus.working_copy(s, work / s.name) for s in (SMALL, LARGE)}
        kinds = list(prompts(SMALL, 0))
        warm = {s.name: in_process(homes[s.name], s) for s in (SMALL, LARGE)}
        sessions = {s.name: session_ids(homes[s.name], runs * len(kinds) + 1, s.name) for s in (SMALL, LARGE)}
        corpus.settle()
        cmds = {name: hook_cmd(home) for name, home in homes.items()}
        walls: dict[tuple[str, str], list[float]] = {}
        codes: dict[tuple[str, str], set[str]] = {}
        loads = [os.getloadavg()[0]]
        for r in range(runs):
            for k, kind in enumerate(kinds):
                for size in (SMALL, LARGE) if r % 2 == 0 else (LARGE, SMALL):
                    sid = sessions[size.name][r * len(kinds) + k]
                    wall, code, chars = one(cmds[size.name], homes[size.name], sid, prompts(size, r)[kind])
                    walls.setdefault((size.name, kind), []).append(wall)
                    codes.setdefault((size.name, kind), set()).add(f"{code}{'' if chars else ' (silent)'}")
            print(f"  round {r + 1}/{runs}", file=sys.stderr)
        loads.append(os.getloadavg()[0])
        rows = []
        for kind in kinds:
            row = {"kind": kind}
            for size in (SMALL, LARGE):
                w = sorted(walls[(size.name, kind)])
                row[size.name] = {"p50_ms": round(statistics.median(w) * 1000, 1),
                                  "p95_ms": round(w[min(len(w) - 1, int(len(w) * 0.95))] * 1000, 1),
                                  "codes": sorted(codes[(size.name, kind)])}
            row["ratio_p50"] = round(row[LARGE.name]["p50_ms"] / row[SMALL.name]["p50_ms"], 2)
            row["warm_ms"] = {name: warm[name][kind] for name in warm}
            rows.append(row)
        every = {size.name: sorted(w for (name, _), ws in walls.items() if name == size.name for w in ws) for size in (SMALL, LARGE)}
        total = {name: {"p50_ms": round(statistics.median(w) * 1000, 1), "p95_ms": round(w[int(len(w) * 0.95)] * 1000, 1)}
                 for name, w in every.items()}
        return {"runs": runs, "rows": rows, "all": total, "load": loads, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "python": sys.version.split()[0], "cores": os.cpu_count()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def markdown(report: dict) -> str:
    small, large = SMALL.name, LARGE.name
    lines = [
        BEGIN,
        "## The per-prompt reflex: wall time on the installed command (`python -m benchmarks.reflex_latency`)",
        "",
        f"Measured {report['when']} on {report['cores']} cores, Python {report['python']}, 1-minute load "
        f"{report['load'][0]:.2f} → {report['load'][1]:.2f}, {report['runs']} rounds (each round runs every kind on both "
        "brains, alternating which goes first). Each prompt is a cold process of the Claude Code command `memverbs install "
        "claude` writes, through a shell, in a session of its own whose cursor exists (nothing else changed), so every "
        "named entity is news and gets its pointer. Brains grown through the tools: small = 308 entities, 1,000 facts; "
        "large = 10,050 entities (15,000 aliases), 100,000 facts. p50 / p95 wall in ms; the hook's log codes show which "
        "path answered (`reflex`: pointers printed on the fast path; `unchanged`: nothing named). The warm column is "
        "the reflex's reads alone in one process (the name lookup, then each named page and its facts), median ms "
        "of 200: the part the brain's size could move.",
        "",
        "| prompt | small p50 / p95 | large p50 / p95 | large ÷ small (p50) | the reads alone, warm: small / large | codes |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        lines.append(f"| {row['kind']} | {row[small]['p50_ms']} / {row[small]['p95_ms']} | {row[large]['p50_ms']} / "
                     f"{row[large]['p95_ms']} | {row['ratio_p50']} | {row['warm_ms'][small]} / {row['warm_ms'][large]} | "
                     f"{', '.join(row[large]['codes'])} |")
    a = report["all"]
    verdict = "met" if a[large]["p50_ms"] <= TARGETS_MS["p50"] and a[large]["p95_ms"] <= TARGETS_MS["p95"] else "**missed**"
    lines += [
        f"| every prompt | {a[small]['p50_ms']} / {a[small]['p95_ms']} | {a[large]['p50_ms']} / {a[large]['p95_ms']} | "
        f"{round(a[large]['p50_ms'] / a[small]['p50_ms'], 2)} | | |",
        "",
        f"Target (quiet machine, large brain): p50 ≤ {TARGETS_MS['p50']} ms, p95 ≤ {TARGETS_MS['p95']} ms: {verdict} in this run"
        " (a loaded machine inflates walls; the ratio column is the flatness figure).",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reflex_latency", description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "run"], default="run")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-write", action="store_true", help="print the table; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    if args.command == "build":
        for size in (SMALL, LARGE):
            corpus.grown_home(size)
        return 0
    report = run(args.runs)
    text = markdown(report)
    print(text)
    if not args.no_write:
        replace_section(BEGIN, END, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
