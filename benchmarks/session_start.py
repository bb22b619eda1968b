"""Session start on the installed command, against another commit: `python -m benchmarks.session_start [--vs REF]`.

What a user waits for when a Claude Code session opens: the launcher file `memverbs install claude`
writes (`$MEMVERBS_HOME/bin/memverbs-hook session-start --harness claude`), a cold process fed the
harness's payload, on a small project brain grown through the CLI: a git repository as the session's
directory, 30 facts remembered in it (12 on the project, 8 on a person, 5 standing preferences, 5 on
another project), a page for the project and one for the person. Each run is a new session.

With `--vs REF` (a commit, say `main`), the same bootstrap is pointed at `git archive REF` unpacked
into a temporary folder, on the same interpreter, home and brain, and the two run in pairs (A B A B …,
which goes first alternating): the ratio is taken pair by pair, so a load that drifts weighs on both.
Before timing, both must print the same bytes for the same brain: a speed-up that changed the pack is
refused, not measured.

Prints the median and fastest wall and CPU (getrusage of the reaped child) in ms, the median of the
pairwise ratios, and the 1-minute load before and after. The quiet-machine target is 40 ms median wall.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.hook_cpu import _cpu_run as cpu_run
from memverbs.hooks.launcher import launcher_script

CHECKOUT = Path(__file__).resolve().parent.parent


def _memverbs(env: dict, cwd: Path, *args: str, stdin: str | None = None) -> None:
    subprocess.run([sys.executable, "-m", "memverbs", *args], env=env, cwd=cwd, input=stdin, text=True, check=True,
                   capture_output=True)


def grow(home: Path, project: Path) -> dict:
    """The home, its brain and the project the session opens in; returns the hooks' environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    _memverbs(env, project, "init")
    facts = ([(f"The build of this project step {i} uses make target t{i}", []) for i in range(1, 13)]
             + [(f"Alice Example owns subsystem {i} of the billing service", ["--entity", "people/alice-example"])
                for i in range(1, 9)]
             + [(f"Use uv never pip, rule {i}", ["--kind", "preference"]) for i in range(1, 6)]
             + [(f"Deploy window decision {i}: Fridays are frozen", ["--entity", "projects/deploy"]) for i in range(1, 6)])
    for fact, extra in facts:
        _memverbs(env, project, "remember", fact, "--provenance", "bench", *extra)
    _memverbs(env, project, "put-page", f"projects/{project.name}",
              stdin=f"---\ntitle: {project.name}\ntype: project\n---\nThe {project.name} repository: a billing service. "
                    "Owned by [[people/alice-example]].\n")
    _memverbs(env, project, "put-page", "people/alice-example",
              stdin="---\ntitle: Alice Example\ntype: person\n---\nAlice Example leads billing.\n")
    return env


def launcher(where: Path, package_parent: Path | None = None) -> list[str]:
    """The launcher file install writes for this interpreter; pointed at another checkout when given."""
    text = launcher_script()
    if package_parent is not None:
        text = text.replace(f'p=["{CHECKOUT}"', f'p=["{package_parent}"', 1)
        if str(package_parent) not in text:
            raise RuntimeError("the launcher file does not name this checkout: is memverbs installed editable from it?")
    where.mkdir(parents=True, exist_ok=True)
    path = where / "memverbs-hook"
    path.write_text(text)
    path.chmod(0o755)
    return [str(path), "session-start", "--harness", "claude"]


def run(argv: list[str], env: dict, project: Path) -> tuple[float, float, str]:
    """One cold session start in `project`: wall ms, CPU ms, what it printed."""
    payload = {"session_id": f"bench-start-{time.time_ns()}", "hook_event_name": "SessionStart", "source": "startup",
               "cwd": str(project)}
    cpu, wall, out = cpu_run(argv, payload, env)
    return wall, cpu, out


def _line(label: str, walls: list[float], cpus: list[float]) -> str:
    return (f"| {label} | {statistics.median(walls):.1f} / {min(walls):.1f} | "
            f"{statistics.median(cpus):.1f} / {min(cpus):.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.session_start", description=__doc__.splitlines()[0])
    parser.add_argument("--vs", metavar="REF", help="a commit to pair against (git archive of it)")
    parser.add_argument("--pairs", type=int, default=25)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memverbs-start-") as tmp_dir:
        tmp = Path(tmp_dir)
        project = tmp / "proj"
        env = grow(tmp / "home", project)
        launches = {"this checkout": launcher(tmp / "bin-this")}
        if args.vs:
            other = tmp / "other"
            other.mkdir()
            archive = subprocess.run(["git", "archive", args.vs], cwd=CHECKOUT, check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(other)], input=archive, check=True)
            launches[args.vs] = launcher(tmp / "bin-other", other)
        outputs = {label: run(cmd, env, project)[2] for label, cmd in launches.items()}
        if not next(iter(outputs.values())) or len(set(outputs.values())) != 1:
            raise RuntimeError(f"the launches print different packs for one brain (or none): {outputs}")
        for cmd in launches.values():  # warm the file cache and the bytecode
            run(cmd, env, project)
        load = [os.getloadavg()[0]]
        walls: dict[str, list[float]] = {label: [] for label in launches}
        cpus: dict[str, list[float]] = {label: [] for label in launches}
        for i in range(args.pairs):
            order = list(launches) if i % 2 == 0 else list(reversed(launches))
            for label in order:
                wall, cpu, _ = run(launches[label], env, project)
                walls[label].append(wall)
                cpus[label].append(cpu)
        load.append(os.getloadavg()[0])
    print(f"Session start, installed Claude Code command, 30-fact project brain; {args.pairs} "
          f"{'pairs' if args.vs else 'runs'}; 1-minute load {load[0]:.2f} -> {load[1]:.2f}; Python {sys.version.split()[0]}")
    print("\n| launch | wall ms, median / fastest | CPU ms, median / fastest |\n|---|---|---|")
    for label in launches:
        print(_line(label, walls[label], cpus[label]))
    if args.vs:
        this, other_label = list(launches)
        wall_ratio = statistics.median(a / b for a, b in zip(walls[this], walls[other_label], strict=True))
        cpu_ratio = statistics.median(a / b for a, b in zip(cpus[this], cpus[other_label], strict=True))
        print(f"\nthis checkout / {other_label}, median of the pairs: wall x{wall_ratio:.2f}, CPU x{cpu_ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
