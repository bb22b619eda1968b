"""A quick cold-hook spot check on a small live brain, through the exact command the installer writes.

    MEMVERBS_HOME=<an initialised home> python -m benchmarks.hook_spot [--runs N]

Runs the Claude Code hook commands `installers.base.hook_command` writes (the lean launcher) and, for
comparison, the console script, through a shell as the harness does: an unchanged heartbeat, a
session start, and a heartbeat that delivers a fact remembered 2.2 s before (past delta's in-flight
window). Prints median and fastest wall seconds. `hook_timing.py` is the full benchmark (every moment,
editable and wheel installs, in rounds); this is the few-seconds check for a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

from memverbs.hooks.events import Harness
from memverbs.installers.base import Options, hook_command, launcher_step
from memverbs.installers.steps import Context


def _wall(cmd: str, payload: dict) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, shell=True, input=json.dumps(payload), capture_output=True, text=True, timeout=30)
    return time.perf_counter() - start, proc.stdout


def _line(name: str, walls: list[float]) -> str:
    return f"{name}: median {statistics.median(walls):.3f} s, fastest {min(walls):.3f} s ({len(walls)} runs)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hook_spot", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args(argv)
    opts = Options(Harness.CLAUDE)
    launcher_step(opts).apply(Context(backups=opts.home.backups / "bench"))  # the file the commands run, as install writes it
    lean = {m: hook_command(opts, m) for m in ("session-start", "heartbeat")}
    console = {m: f"memverbs hook {m} --harness claude" for m in ("session-start", "heartbeat")}
    subprocess.run(["memverbs", "remember", "The spot check keeps one fact", "--provenance", "bench",
                    "--entity", "bench/spot"], capture_output=True, check=True)
    time.sleep(2.2)
    for label, cmds in (("launcher file", lean), ("console script", console)):
        starts, quiet, delivers = [], [], []
        for i in range(args.runs):
            sid = f"spot-{time.time_ns()}"
            wall, _ = _wall(cmds["session-start"], {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup"})
            starts.append(wall)
            time.sleep(2.2)
            beat = {"session_id": sid, "hook_event_name": "UserPromptSubmit", "prompt": "next?"}
            wall, out = _wall(cmds["heartbeat"], beat)
            if out:
                raise RuntimeError("an unchanged heartbeat printed something")
            quiet.append(wall)
            subprocess.run(["memverbs", "remember", f"Spot fact {label} {i}", "--provenance", "bench",
                            "--entity", "bench/spot"], capture_output=True, check=True)
            time.sleep(2.2)
            wall, out = _wall(cmds["heartbeat"], beat)
            if f"Spot fact {label} {i}" not in out:
                raise RuntimeError("a delivering heartbeat did not deliver the new fact")
            delivers.append(wall)
        print(f"[{label}]")
        for name, walls in (("unchanged heartbeat", quiet), ("delivering heartbeat", delivers), ("session-start", starts)):
            print("  " + _line(name, walls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
