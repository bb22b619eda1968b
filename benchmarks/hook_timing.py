"""Hook wall times per moment and per way of starting the hook: `python -m benchmarks.hook_timing`.

Six launches of the same hook code, each a cold process fed a recorded Claude Code payload:

* the `memverbs` console script, editable install (`pip install -e .`, what a developer has);
* the bootstrap one-liner earlier installs wrote, which the JS plugins still spawn
  (hooks/launcher.py: `python -I -S -c <bootstrap> hook …`), editable install;
* the launcher file the installers write now (`$MEMVERBS_HOME/bin/memverbs-hook …`: `#!python -IS`
  and the same bootstrap), editable install;
* the same three for a wheel install (`pip install .`, what users get): the wheel is built from this
  checkout and installed without dependencies into a venv of its own under benchmarks/.cache/ (the
  hook path imports none of them; the venv has the same `.pth` files a full install has —
  setuptools' — so `site` costs what it costs a user).

Moments: the floor (kill switch: start, import the runner, exit), an unchanged heartbeat (one indexed
read), a heartbeat that delivers (full `delta`), session-start (a pack of 8 cards), and the same two on a
remote brain (`serve --http` on loopback). Also `python -c pass` and `python -I -S -c pass`: the
interpreter alone. Writes the `hooks-wave2` section of RESULTS.md; also `python -m benchmarks --only hooks`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpus, processes, startup
from benchmarks.results_file import replace_section

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
WHEEL_VENV = corpus.CACHE / "wheel-venv"
BEGIN, END = "<!-- hooks-wave2:begin -->", "<!-- hooks-wave2:end -->"
# Targets are for a cold process on a quiet machine (the numbers).
TARGETS = {"heartbeat_unchanged": 0.060, "heartbeat_delivers": 0.120, "session_start": 0.150, "remote_session_start": 0.150}
LATEST = HERE / "results" / "hooks-latest.json"


def wheel_python() -> Path:
    """A venv holding this checkout as a wheel (rebuilt every run: the code may have changed)."""
    with tempfile.TemporaryDirectory(prefix="memverbs-wheel-") as dist:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist,
                        str(CHECKOUT)], check=True, capture_output=True)
        wheel = next(Path(dist).glob("memverbs-*.whl"))
        if not (WHEEL_VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(WHEEL_VENV)], check=True)
        subprocess.run([str(WHEEL_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                        str(wheel)], check=True, capture_output=True)
    return WHEEL_VENV / "bin" / "python"


def lean_argv(python: Path | str) -> list[str]:
    """What `memverbs install` would write for that interpreter's memverbs (asked of that interpreter)."""
    code = "import json;from memverbs.hooks.launcher import bootstrap_argv as b;print(json.dumps(b()))"
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd="/").stdout
    return json.loads(out)


def launcher_file(python: Path | str, where: Path) -> list[str]:
    """The launcher file `memverbs install` would write for that interpreter's memverbs, written into `where`."""
    code = "from memverbs.hooks.launcher import launcher_script as s;print(s(),end='')"
    text = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd="/").stdout
    where.mkdir(parents=True, exist_ok=True)
    path = where / "memverbs-hook"
    path.write_text(text)
    path.chmod(0o755)
    return [str(path)]


LAUNCHERS = corpus.CACHE / "launchers"


def launches() -> dict[str, list[str]]:
    wheel = wheel_python()
    return {
        "editable, console script": [*processes.memverbs_cmd(), "hook"],
        "editable, one-liner": lean_argv(sys.executable),
        "editable, launcher file": launcher_file(sys.executable, LAUNCHERS / "editable"),
        "wheel, console script": [str(wheel.parent / "memverbs"), "hook"],
        "wheel, one-liner": lean_argv(wheel),
        "wheel, launcher file": launcher_file(wheel, LAUNCHERS / "wheel"),
    }


def interpreter_floor(python: str, runs: int) -> dict:
    out = {}
    for label, flags in (("python -c pass", []), ("python -I -S -c pass", ["-I", "-S"])):
        walls = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([python, *flags, "-c", "pass"], check=True)
            walls.append(time.perf_counter() - start)
        out[label] = {"median_s": round(statistics.median(walls), 3), "runs": [round(w, 3) for w in walls]}
    return out


def interleaved(size, tmp: Path, launches: dict[str, list[str]], runs: int) -> dict:
    """The interpreter alone, the floor and an unchanged heartbeat of every launch, in rounds: each round
    runs every case once, so a load that drifts during the run weighs on every column alike."""
    beat = dict(startup.HOOK_PAYLOAD, session_id=f"bench-rounds-{time.time_ns()}", hook_event_name="UserPromptSubmit")
    homes = {}
    for n, (label, hook) in enumerate(launches.items()):
        home = corpus.working_copy(size, tmp / f"rounds-{n}")
        env = startup._env(home)
        subprocess.run([*hook, "session-start", "--harness", "claude"], input=json.dumps(dict(beat, hook_event_name="SessionStart")),
                       env=env, capture_output=True, text=True, timeout=30, check=True)
        homes[label] = (home, env)
    time.sleep(2.5)  # past delta's in-flight lag
    for label, hook in launches.items():
        subprocess.run([*hook, "heartbeat", "--harness", "claude"], input=json.dumps(beat), env=homes[label][1],
                       capture_output=True, text=True, timeout=30)
    time.sleep(2.5)
    cases: dict[str, tuple[list[str], dict, bytes]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], dict(os.environ), b""),
        "python -I -S -c pass": ([sys.executable, "-I", "-S", "-c", "pass"], dict(os.environ), b""),
    }
    for label, hook in launches.items():
        home, env = homes[label]
        cases[f"{label}: floor"] = ([*hook, "heartbeat", "--harness", "claude"], {**env, "MEMVERBS_HOOKS": "off"}, b"{}")
        cases[f"{label}: unchanged heartbeat"] = ([*hook, "heartbeat", "--harness", "claude"], env, json.dumps(beat).encode())
    walls: dict[str, list[float]] = {k: [] for k in cases}
    cpus: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(runs):
        for key, (argv, env, data) in cases.items():
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(argv, input=data, env=env, capture_output=True, timeout=30)
            walls[key].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[key].append((after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime))
            if key.endswith("unchanged heartbeat"):
                code = json.loads((homes[key.split(":")[0]][0] / "logs" / "hooks.jsonl").read_text().splitlines()[-1])["code"]
                if proc.stdout or code != "unchanged":
                    raise RuntimeError(f"{key} logged {code}")
    return {k: {"median_s": round(statistics.median(v), 3), "min_s": round(min(v), 3),
                "cpu_ms_median": round(1000 * statistics.median(cpus[k]), 1)} for k, v in walls.items()}


def run(runs: int) -> dict:
    size = corpus.SIZES["smoke"]
    load = [round(os.getloadavg()[0], 2)]
    report: dict = {"at": time.strftime("%Y-%m-%d %H:%M"), "runs": runs, "nproc": os.cpu_count(),
                    "python": sys.version.split()[0], "launches": {}}
    report["interpreter"] = interpreter_floor(sys.executable, runs)
    with tempfile.TemporaryDirectory(prefix="memverbs-hookbench-") as tmp:
        all_launches = launches()
        print("[hooks] in rounds: interpreter, floor and unchanged heartbeat of every launch", file=sys.stderr)
        before = round(os.getloadavg()[0], 2)
        report["rounds"] = interleaved(size, Path(tmp), all_launches, runs * 2)
        report["rounds_load"] = [before, round(os.getloadavg()[0], 2)]
        load.append(round(os.getloadavg()[0], 2))
        for label, hook in all_launches.items():
            print(f"[hooks] {label}", file=sys.stderr)
            work = corpus.working_copy(size, Path(tmp) / "home")
            row = {
                "floor": startup.floor_wall(work, runs, hook),
                "heartbeat_unchanged": startup.heartbeat_unchanged_wall(work, runs, hook),
                "heartbeat_delivers": startup.hook_wall(work, "heartbeat", runs, hook),
                "session_start": startup.hook_wall(work, "session-start", runs, hook),
            }
            remote = startup.remote_hook_wall(corpus.working_copy(size, Path(tmp) / "remote"), runs, hook)
            row["remote_session_start"], row["remote_heartbeat_delivers"] = remote["session-start"], remote["heartbeat"]
            report["launches"][label] = row
            load.append(round(os.getloadavg()[0], 2))
            shutil.rmtree(Path(tmp) / "home")
            shutil.rmtree(Path(tmp) / "remote")
    report["load_1min"] = load
    return report


ROWS = (
    ("floor", "floor: kill switch (start, import the runner, exit)"),
    ("heartbeat_unchanged", "heartbeat, nothing changed (one indexed read)"),
    ("heartbeat_delivers", "heartbeat that delivers (full `delta`)"),
    ("session_start", "session-start (pack of 8 cards)"),
    ("remote_session_start", "remote brain: session-start (`context_pack` + first `delta` over loopback)"),
    ("remote_heartbeat_delivers", "remote brain: heartbeat that delivers (`delta` over loopback)"),
)


def markdown(report: dict) -> str:
    labels = list(report["launches"])
    loads = report["load_1min"]
    quiet = max(loads) < 1.5
    lines = [
        BEGIN,
        "## Hooks: wall time per moment and per launch",
        "",
        f"Measured {report['at']} UTC on {report['nproc']} cores, Python {report['python']}, smoke corpus, "
        f"{report['runs']} cold runs per cell (median wall seconds; in brackets the hook's own clock in ms, from its "
        "log line — the wall minus interpreter start and imports). `python -m benchmarks.hook_timing` "
        "(or `python -m benchmarks --only hooks`); launches and method in its docstring. "
        f"1-minute load average {min(loads)}–{max(loads)} during the run: "
        + ("a quiet machine." if quiet else "**a loaded machine (shared with other work): every wall is inflated; "
           "compare the columns with each other and with the interpreter rows, and re-run on a quiet machine "
           "before reading them against the targets.**"),
        "",
        "| interpreter alone | median wall s |",
        "|---|---|",
    ]
    for label, cell in report["interpreter"].items():
        lines.append(f"| `{label}` | {cell['median_s']:.3f} |")
    if "rounds" in report:
        rounds = report["rounds"]
        lines += [
            "",
            f"**In rounds** ({report.get('rounds_n', report['runs'] * 2)} rounds; each round runs every case once, so "
            "load drift weighs on all alike — the fairest comparison on a loaded machine): median / fastest wall in "
            "seconds" + (f"; measured {report.get('rounds_at', report['at'])} UTC, 1-minute load "
                         f"{report['rounds_load'][0]}–{report['rounds_load'][1]} while they ran"
                         if "rounds_load" in report else "") + ".",
            "",
            "| case | " + " | ".join(labels) + " |",
            "|---|" + "---|" * len(labels),
        ]
        for case in ("floor", "unchanged heartbeat"):
            cells = [f"{rounds[f'{label}: {case}']['median_s']:.3f} / {rounds[f'{label}: {case}']['min_s']:.3f}"
                     for label in labels]
            lines.append(f"| {case} | " + " | ".join(cells) + " |")
        for case in ("python -c pass", "python -I -S -c pass"):
            lines.append(f"| `{case}` (interpreter alone) | {rounds[case]['median_s']:.3f} / {rounds[case]['min_s']:.3f} |"
                         + " |" * (len(labels) - 1))
        lines += ["", "**Each moment in sequence** (one launch after another, so a launch measured in a busier minute "
                  "looks slower than it is): median wall seconds, the hook's own clock in ms in brackets."]
    lines += ["", "| moment | " + " | ".join(labels) + " | target (quiet) |", "|---|" + "---|" * len(labels) + "---|"]
    for key, title in ROWS:
        cells = []
        for label in labels:
            cell = report["launches"][label][key]
            own = f" ({cell['hook_ms_median']:g})" if "hook_ms_median" in cell else ""
            cells.append(f"{cell['median_s']:.3f}{own}")
        target = TARGETS.get(key)
        lean = report["launches"][labels[-1]][key]["median_s"]
        verdict = "" if target is None else f"≤ {target:.3f}: " + ("met" if lean <= target else "**missed**") + " (wheel, launcher file)"
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {verdict or '—'} |")
    lines += [
        "",
        "The installers write the launcher file for Claude Code's, Codex's and Grok's hooks (opencode's and "
        "OpenClaw's plugins spawn the one-liner's argv). The verdict column judges the wheel install's launcher "
        "file — what a user's harness runs. The floor row of a lean launch is the interpreter and the "
        "bootstrap only (the kill switch is checked before the runner is imported); of a console script, the "
        "interpreter, `site` and the CLI's parser. An unchanged heartbeat through the lean launcher imports "
        "`json`, `select`, `sqlite3` (and `tomllib` only when the home's config file changed since the last hook: its parsed tables wait in `hooks/config.json`) and no runner module (tested); a "
        "delivering heartbeat and a session start import no `email`, `logging`, `decimal`, `shutil`, `socket`, "
        "`dataclasses`, `inspect`, `tomllib` or `hashlib` (tested); the remote hook path imports no "
        "MCP SDK, pydantic, httpx, anyio, `http`, `email` or `ssl` (tested): one POST per verb over a plain socket.",
        END,
    ]
    return "\n".join(lines)


AB_BEGIN, AB_END = "<!-- hook-launcher-ab:begin -->", "<!-- hook-launcher-ab:end -->"


def launcher_ab(rounds: int) -> str:
    """The launcher file against the one-liner it replaces, in rounds: the `hook-launcher-ab` section."""
    chosen = {k: v for k, v in launches().items() if "console" not in k}
    with tempfile.TemporaryDirectory(prefix="memverbs-hookab-") as tmp:
        before = round(os.getloadavg()[0], 2)
        found = interleaved(corpus.SIZES["smoke"], Path(tmp), chosen, rounds)
        after = round(os.getloadavg()[0], 2)
    lines = [
        AB_BEGIN,
        f"## Hook command: the launcher file against the one-liner (`python -m benchmarks.hook_timing --launcher-ab {rounds}`, "
        f"{time.strftime('%Y-%m-%d')})",
        "",
        "The command each harness's settings hold went from the 334-character bootstrap one-liner "
        "(`<python> -I -S -c '<bootstrap>' hook heartbeat --harness claude`) to the launcher file "
        "(`~/.memverbs/bin/memverbs-hook heartbeat --harness claude`, ~60 characters with a default home). "
        f"Same hook code, same brain (smoke corpus); {rounds} rounds, each running every case once; median / fastest "
        f"wall in seconds; 1-minute load {before}–{after} (a shared machine: read the columns against each other; "
        "the lead re-runs this on a quiet one).",
        "",
        "| case | " + " | ".join(chosen) + " |",
        "|---|" + "---|" * len(chosen),
    ]
    for case in ("floor", "unchanged heartbeat"):
        lines.append(f"| {case} | " + " | ".join(
            f"{found[f'{label}: {case}']['median_s']:.3f} / {found[f'{label}: {case}']['min_s']:.3f}" for label in chosen) + " |")
    for case in ("floor", "unchanged heartbeat"):  # a process's own CPU moves little with the machine's load
        lines.append(f"| {case}, CPU ms (median) | " + " | ".join(
            f"{found[f'{label}: {case}']['cpu_ms_median']:.1f}" for label in chosen) + " |")
    for case in ("python -c pass", "python -I -S -c pass"):
        lines.append(f"| `{case}` (interpreter alone) | {found[case]['median_s']:.3f} / {found[case]['min_s']:.3f} |"
                     + " |" * (len(chosen) - 1))
    return "\n".join([*lines, AB_END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hook_timing", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    parser.add_argument("--render", action="store_true", help="rewrite the section from the last run's JSON; measure nothing")
    parser.add_argument("--rounds-only", type=int, metavar="N",
                        help="measure only the N rounds (interpreter, floor, unchanged heartbeat) into the last run's JSON")
    parser.add_argument("--launcher-ab", type=int, metavar="N",
                        help="only the launcher file against the one-liner, N rounds: the hook-launcher-ab section")
    args = parser.parse_args(argv)
    if args.launcher_ab:
        section = launcher_ab(args.launcher_ab)
        print(section)
        if not args.no_write:
            replace_section(AB_BEGIN, AB_END, section)
        return 0
    if args.render:
        replace_section(BEGIN, END, markdown(json.loads(LATEST.read_text())))
        return 0
    if args.rounds_only:
        report = json.loads(LATEST.read_text())
        with tempfile.TemporaryDirectory(prefix="memverbs-hookbench-") as tmp:
            before = round(os.getloadavg()[0], 2)
            report["rounds"] = interleaved(corpus.SIZES["smoke"], Path(tmp), launches(), args.rounds_only)
            report["rounds_load"], report["rounds_n"] = [before, round(os.getloadavg()[0], 2)], args.rounds_only
            report["rounds_at"] = time.strftime("%Y-%m-%d %H:%M")
        LATEST.write_text(json.dumps(report, indent=2) + "\n")
        if not args.no_write:
            replace_section(BEGIN, END, markdown(report))
        return 0
    report = run(args.runs)
    LATEST.parent.mkdir(exist_ok=True)
    LATEST.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not args.no_write:
        replace_section(BEGIN, END, markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
