"""Pack quality: is what the model reads at session start about the session's project and its user?

    python -m benchmarks.pack_quality            # measure, write results/pack-quality-latest.json and RESULTS.md
    python -m benchmarks.pack_quality --no-write
    python -m benchmarks.pack_quality --week     # only the week in two repositories (benchmarks/pack_week.py)

Two brains are read. The first, below, is every project's material written at once. The second
(benchmarks/pack_week.py) is a realistic week in two repositories: decisions, the user's rules
and statements as capture takes them, and five or six captured commits a day, each on its day;
there the question is whether the user's word survives a busy week.

A brain grown the way it is in use: three real git repositories in a temp dir, an agent in each
remembering through the MCP stdio server started in its repository (no project named, as agents
do), the user through the CLI (pages, personal facts, shared people, from outside any repository),
and noise (facts about topics no project needs, remembered last, so "what the brain learned
recently" is mostly noise). Then a session starts in each repository through the real hook process
(`memverbs hook session-start --harness claude`, the payload's `cwd` inside the repository) and the
pack it prints is read line by line:

* on-topic share: lines (cards, threads, facts) about the current project (its entity, the facts
  remembered in it, the entities they are about) or the user (`people/me`); target ≥ 0.8;
* recall: the project's open commitments and decisions that appear in the pack; target ≥ 0.9;
* unrelated share: lines about another project or the noise; target ≤ 0.05;
* size in characters and estimated tokens (chars / 4), and the Claude Code JSON line against its
  10,000-character cut;
* the session-start hook's wall time through the lean launcher (cold process, median of the runs;
  target ≤ 150 ms, as in benchmarks/hook_timing.py, which measures the launch variants), beside a
  start outside any repository on the same brain.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import pack_week
from benchmarks.hook_timing import lean_argv
from benchmarks.processes import memverbs_cmd
from benchmarks.results_file import replace_section
from benchmarks.stdio_client import StdioClient

HERE = Path(__file__).resolve().parent
LATEST = HERE / "results" / "pack-quality-latest.json"
BEGIN, END = "<!-- pack-quality:begin -->", "<!-- pack-quality:end -->"
WEEK_BEGIN, WEEK_END = "<!-- pack-week:begin -->", "<!-- pack-week:end -->"
TARGETS = {"on_topic": 0.8, "recall": 0.9, "unrelated": 0.05, "session_start_s": 0.150}
CLAUDE_LIMIT = 10_000

# name → (remote, what its agent decides, what it commits to, what it notes about shared people, events)
PROJECTS = {
    "ledger": ("git@github.com:acme/ledger.git",
               ["Ledger stores money as integer cents", "Ledger's API is versioned in the URL path",
                "Ledger reconciles nightly at 02:00 UTC"],
               ["Ship the Ledger CSV importer by Friday", "Write the Ledger migration guide",
                "Rotate Ledger's webhook secret before the audit"],
               [("people/dana", "Dana owns Ledger's reconciliation job"), ("people/eli", "Eli reviews Ledger schema changes")],
               ["Ledger v2.3 released", "Ledger's staging database was restored"]),
    "atlas": ("https://github.com/acme/atlas",
              ["Atlas renders maps with vector tiles", "Atlas caches tiles in Redis for an hour",
               "Atlas drops support for IE11"],
              ["Fix the Atlas tile seams before the demo", "Move Atlas CI to the arm64 runners",
               "Publish the Atlas style spec"],
              [("people/dana", "Dana designed Atlas's tile cache"), ("people/fay", "Fay runs Atlas's on-call rota")],
              ["Atlas hit one million tiles a day", "Atlas's tile server was upgraded"]),
    "pixel": ("https://gitlab.com/me/pixel.git",
              ["Pixel is written in Rust with no unsafe code", "Pixel's palette files are TOML",
               "Pixel targets 60 frames per second"],
              ["Add undo to the Pixel editor", "Port Pixel to WebAssembly", "Answer the Pixel issue about PNG export"],
              [("people/eli", "Eli contributed Pixel's dithering"), ("people/gus", "Gus tests Pixel on macOS")],
              ["Pixel 0.4 was tagged", "Pixel's website moved to a new host"]),
}
PERSONAL = ["I prefer short answers with code first", "I work in UTC+1", "I review pull requests in the morning"]
PEOPLE = {"people/dana": "Dana Lopez", "people/eli": "Eli Park", "people/fay": "Fay Young", "people/gus": "Gus Moore",
          "people/me": "Me"}
NOISE = 40


def repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, check=True)
    return path


def grow(tmp: Path, env: dict) -> dict[str, Path]:
    """The brain, through the CLI (the user) and MCP (each project's agent); returns the repositories."""
    def cli(cwd: Path, *args: str, stdin: str | None = None) -> None:
        subprocess.run([*memverbs_cmd(), *args], cwd=cwd, env=env, input=stdin, text=True, check=True, capture_output=True)

    outside = tmp / "elsewhere"
    outside.mkdir()
    cli(outside, "init")
    for slug, title in PEOPLE.items():
        about = "The user of these repositories." if slug == "people/me" else f"{title} works with [[people/me|me]]."
        cli(outside, "put-page", slug, stdin=f"---\ntitle: {title}\ntype: person\n---\n{about}\n")
    for fact in PERSONAL:
        cli(outside, "remember", fact, "--provenance", "the user", "--entity", "people/me", "--kind", "preference")
    repos = {}
    for name, (remote, decisions, commitments, people, events) in PROJECTS.items():
        repos[name] = repo(tmp / "code" / name, remote)
        summary = f"{name.title()}, one of my repositories; ask [[people/dana|Dana]] about its history."
        cli(repos[name], "put-page", f"projects/{name}", stdin=f"---\ntitle: {name.title()}\ntype: project\n---\n{summary}\n")
        with StdioClient([*memverbs_cmd(), "serve"], env=env, cwd=repos[name]) as agent:
            for text in decisions:
                agent.call("remember", {"fact": text, "provenance": "agent session"})
            for text in commitments:
                agent.call("remember", {"fact": text, "provenance": "agent session", "kind": "commitment"})
            for slug, text in people:
                agent.call("remember", {"fact": text, "provenance": "agent session", "entity": slug})
            for text in events:
                agent.call("remember", {"fact": text, "provenance": "agent session", "kind": "event"})
    for n in range(NOISE):  # remembered last: the brain's most recent learning is mostly noise
        cli(outside, "remember", f"Noise item {n}: the office plant needs water", "--provenance", "noise",
            "--entity", f"topics/noise-{n % 7}")
    return repos


def classify(project: str) -> dict[str, str]:
    """Each fact text and card slug → whose it is: 'project', 'user', 'other' or 'noise'."""
    owner: dict[str, str] = {}
    for name, (_, decisions, commitments, people, events) in PROJECTS.items():
        mine = "project" if name == project else "other"
        for text in [*decisions, *commitments, *(t for _, t in people), *events]:
            owner[text] = mine
        owner[f"projects/{name}"] = mine
        if name == project:
            for slug, _ in people:
                owner[slug] = "project"  # what hangs off the project
    owner["people/dana"] = "project"  # every project's page links to her: she hangs off each
    for text in PERSONAL:
        owner[text] = "user"
    owner["people/me"] = "user"
    return owner


def read_pack(text: str, project: str) -> dict:
    owner = classify(project)
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    kinds = []
    for line in lines:
        slug = line.split("`")[1] if line.startswith("- **") and "`" in line else None
        if slug is not None:
            kinds.append(owner.get(slug, "other" if slug.startswith("projects/") else "noise"))
            continue
        hit = next((who for fact, who in owner.items() if " " in fact and fact in line), None)
        kinds.append(hit or ("noise" if "Noise item" in line else "other"))
    _, decisions, commitments, _, _ = PROJECTS[project]
    wanted = [*decisions, *commitments]
    n = max(1, len(lines))
    return {
        "lines": len(lines),
        "on_topic": round(sum(k in ("project", "user") for k in kinds) / n, 3),
        "unrelated": round(sum(k in ("other", "noise") for k in kinds) / n, 3),
        "recall": round(sum(w in text for w in wanted) / len(wanted), 3),
        "missing": [w for w in wanted if w not in text],
        "chars": len(text),
        "tokens": math.ceil(len(text) / 4),
    }


def session_start(env: dict, cwd: Path, session: str, hook: list[str]) -> tuple[str, int, float, int]:
    """(pack text, Claude JSON line length, wall seconds, the hook's own ms from its log line)."""
    payload = {"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(cwd)}
    started = time.perf_counter()
    proc = subprocess.run([*hook, "session-start", "--harness", "claude"], input=json.dumps(payload),
                          env=env, capture_output=True, text=True, timeout=30, check=True)
    wall = time.perf_counter() - started
    line = proc.stdout.strip()
    logged = json.loads((Path(env["MEMVERBS_HOME"]) / "logs" / "hooks.jsonl").read_text().splitlines()[-1])
    return json.loads(line)["hookSpecificOutput"]["additionalContext"], len(line), wall, int(logged["ms"])


def run(runs: int) -> dict:
    hook = lean_argv(sys.executable)  # what `memverbs install` writes into a harness's hooks
    with tempfile.TemporaryDirectory(prefix="memverbs-packq-") as tmp_name:
        tmp = Path(tmp_name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        env["MEMVERBS_HOME"] = str(tmp / "home")
        repos = grow(tmp, env)
        sessions = {}
        for name, path in repos.items():
            text, json_chars, _, _ = session_start(env, path, f"pq-{name}-0", hook)
            sessions[name] = read_pack(text, name) | {"json_line_chars": json_chars, "text": text}
        # Timed interleaved with a start outside any repository on the same brain (no project to find or
        # choose by), so what projects add is read under the same load.
        places = {**repos, "(no project)": tmp / "elsewhere"}
        walls: dict[str, list[float]] = {name: [] for name in places}
        own: dict[str, list[int]] = {name: [] for name in places}
        for k in range(1, runs + 1):
            for name, path in places.items():
                _, _, wall, ms = session_start(env, path, f"pq-{name}-{k}", hook)
                walls[name].append(wall)
                own[name].append(ms)
        timing = {name: {"wall_s_median": round(statistics.median(walls[name]), 4),
                         "wall_s_min": round(min(walls[name]), 4),
                         "hook_ms_median": statistics.median(own[name])} for name in places}
    return {"at": time.strftime("%Y-%m-%d %H:%M"), "runs": runs, "load_1min": round(os.getloadavg()[0], 2),
            "nproc": os.cpu_count(), "sessions": sessions, "timing": timing}


def markdown(report: dict) -> str:
    s, timing = report["sessions"], report["timing"]

    def mark(value: float, target: float, low: bool = False) -> str:
        return f"{value}" + ("" if (value <= target if low else value >= target) else " (missed)")

    rows = [
        "| project | lines | on topic (≥ 0.8) | commitments + decisions recalled (≥ 0.9) | unrelated (≤ 0.05) | chars | tokens | Claude JSON line (< 10,000) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in s.items():
        rows.append(
            f"| {name} | {r['lines']} | {mark(r['on_topic'], TARGETS['on_topic'])} | {mark(r['recall'], TARGETS['recall'])} | "
            f"{mark(r['unrelated'], TARGETS['unrelated'], low=True)} | {r['chars']:,} | {r['tokens']:,} | {r['json_line_chars']:,} |"
        )
    times = ["| session started in | wall median / fastest | hook's own ms (median) | ≤ 150 ms |", "|---|---|---|---|"]
    for name, t in timing.items():
        met = "met" if t["wall_s_median"] <= TARGETS["session_start_s"] else "**missed** (median)"
        times.append(f"| {name} | {t['wall_s_median'] * 1000:.0f} / {t['wall_s_min'] * 1000:.0f} ms | {t['hook_ms_median']:.0f} | {met} |")
    shown = next(iter(s))
    return "\n".join([
        BEGIN,
        "## Pack quality (what the model reads at session start)",
        "",
        f"`python -m benchmarks.pack_quality` ({report['at']}, {report['nproc']} cores, 1-minute load {report['load_1min']} "
        "at the end). A brain grown through the CLI (the user: people pages, personal facts, 40 noise facts "
        "remembered last) and through MCP (an agent per repository, its stdio server started in the repository, "
        "no project named), three real git repositories; a session starts in each through the real hook process. "
        "A line is a card, thread or fact line; \"on topic\" = about the session's project (its entity, facts "
        "remembered in it, the people those are about or its page links to) or the user; \"unrelated\" = "
        "another project's or noise.",
        "",
        *rows,
        "",
        f"Session-start time through the lean launcher (what `memverbs install` writes), {report['runs']} cold runs "
        "per place, interleaved with a start outside any repository on the same brain, so what finding and "
        "choosing by the project costs is read under the same load. benchmarks/hook_timing.py measures the "
        "launch variants on a quiet machine (\"Hooks\" above).",
        "",
        *times,
        "",
        f"What the model reads in the `{shown}` session (the `additionalContext` of the Claude Code hook output):",
        "",
        "```markdown",
        s[shown]["text"],
        "```",
        END,
    ])


def week_markdown(week: dict, at: str) -> str:
    return "\n".join([
        WEEK_BEGIN,
        "## Pack quality over a week in two repositories (`python -m benchmarks.pack_quality --week`)",
        "",
        f"{at}, {os.cpu_count()} cores, 1-minute load {os.getloadavg()[0]:.2f} (the figures are counts, not timings). "
        "benchmarks/pack_week.py: seven days in `billing` and `webapp`, each repository's agent remembering its "
        "decisions through the MCP server started in it, what capture takes from the day's sessions written with "
        "capture's provenance (the user's rules and statements; five or six commits a day as events), the user's "
        "own preference set a month before from outside both; each fact's clock then set back to its day. A session "
        "starts in each repository through the real hook process. \"The user's word\": the rules and statements the "
        "user made in that repository, and the standing preference.",
        "",
        *pack_week.markdown(week),
        "",
        *(part for name, r in week.items() for part in (
            f"What the model reads in the `{name}` session:", "", "```markdown", r["text"], "```", "")),
        WEEK_END,
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pack_quality", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed session starts per project (default 9)")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    parser.add_argument("--week", action="store_true", help="only the week in two repositories (no timing)")
    args = parser.parse_args(argv)
    at = time.strftime("%Y-%m-%d %H:%M")
    week = pack_week.run()
    report = {"week": week} if args.week else run(args.runs) | {"week": week}
    if args.no_write:
        print(json.dumps(report, indent=2))
        return 0
    LATEST.parent.mkdir(exist_ok=True)
    (LATEST.with_name("pack-week-latest.json") if args.week else LATEST).write_text(json.dumps(report, indent=2) + "\n")
    if not args.week:
        replace_section(BEGIN, END, markdown(report))
    replace_section(WEEK_BEGIN, WEEK_END, week_markdown(week, at))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
