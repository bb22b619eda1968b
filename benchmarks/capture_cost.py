"""What capture costs: the hook's own time, and the worker's CPU time and peak memory as transcripts grow.

* The hook: the lean launcher, as installed, from exec to exit, with the worker forked off; beside
  it in the same run the bare interpreter and the launcher's floor (`MEMVERBS_HOOKS=off`).
* The worker, in a fresh process (interpreter, imports, settings, reading, detection, the writes),
  on transcripts heavy in what the user typed — the case that once took 669 s for 110 MB: long
  prose turns (a statement now and then), a command and its output after each. At 1 MB and at
  100 MB (`sizes`), so it shows capture is linear: each MB costs what the first did.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HOOK_RUNS = 20
_PROSE = ("the of and to in is that for it as was with be by on not this are or from at which but have an they you were her "
               "one all we can has there been if more when will would who so no what up its about into than them out time only new "
               "some could these two may first then do any like my now over such our even most made after also did many before "
               "must through back where years much your way well down should because each just those people how too little state "
               "good very make world still own see men work long get here between both life being under day same another know "
               "while last might us great old year off come since against go came right used take three")


def heavy_transcript(path: Path, size: int, seed: int = 7) -> int:
    """A Claude Code transcript of about `size` bytes, most of it the user's prose; returns its turns."""
    rng = random.Random(seed)
    vocabulary = _PROSE.split()

    def sentence(low: int, high: int) -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high))).capitalize() + "."

    def entry(kind: str, content: object, n: int) -> str:
        return json.dumps({"type": kind, "sessionId": "heavy", "cwd": "/nowhere", "uuid": str(n), "timestamp": "2026-12-01T10:00:00.000Z",
                           "message": {"role": kind, "content": content}})

    written, n = 0, 0
    with path.open("w") as fh:
        while written < size:
            n += 1
            text = " ".join(sentence(8, 30) for _ in range(rng.randint(3, 20)))
            if n % 5003 == 0:  # rare: the search for facts never stops early, the costliest case
                text += f" We decided to keep module {n} small. Remember that DB_PASS=rose-{n}-garden-42."
            chunk = "\n".join([
                entry("user", text, n),
                entry("assistant", [{"type": "text", "text": sentence(20, 60)},
                                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"pytest -q tests/test_{n}.py"}}], n),
                entry("user", [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "." * 200 + f"\n{n} passed"}], n),
            ]) + "\n"
            fh.write(chunk)
            written += len(chunk)
    return n


def capture_in_process(env: dict, path: Path, harness: str, sid: str) -> dict:
    """One capture by the worker in a fresh process: its code, CPU time and peak RSS."""
    code = ("import json,sys,resource;from memverbs.server.capture.worker import run_job;"
            "c=run_job(json.loads(sys.argv[1]));u=resource.getrusage(resource.RUSAGE_SELF);"
            "print(json.dumps({'code':c,'cpu_s':u.ru_utime+u.ru_stime,'rss_mb':u.ru_maxrss/1024}))")
    job = {"harness": harness, "session_id": sid, "transcript_path": str(path), "home": env["MEMVERBS_HOME"], "event": "bench"}
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(job)], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def scale(env: dict, root: Path, sizes: tuple[int, ...], runs: int = 3) -> list[dict]:
    """Capture CPU and peak RSS for a heavy transcript of each size (median CPU, max RSS of `runs`)."""
    out = []
    for size in sizes:
        path = root / f"heavy-{size}.jsonl"
        turns = heavy_transcript(path, size)
        measured = [capture_in_process(env, path, "claude", f"heavy-{size}-{n}") for n in range(runs if size <= 8 << 20 else 1)]
        out.append({"bytes": path.stat().st_size, "turns": turns, "codes": sorted({m["code"] for m in measured}),
                    "cpu_s": statistics.median(m["cpu_s"] for m in measured), "rss_mb": max(m["rss_mb"] for m in measured)})
        path.unlink()
    return out


def hook(env: dict, root: Path, transcript: Path) -> dict:
    """The hook's wall and CPU time, interleaved with the interpreter's and the launcher's floor."""
    from memverbs.hooks.launcher import bootstrap_argv  # noqa: PLC0415

    walls, cpus, bare, floor, floor_cpu = [], [], [], [], []
    log = Path(env["MEMVERBS_HOME"]) / "logs" / "capture.jsonl"
    for n in range(HOOK_RUNS):
        payload = json.dumps({"session_id": f"hook-{n}", "transcript_path": str(transcript), "cwd": str(root),
                              "hook_event_name": "SessionEnd", "reason": "other"})
        before = len(log.read_text().splitlines()) if log.exists() else 0
        t0, c0 = time.perf_counter(), _children_cpu()
        subprocess.run([*bootstrap_argv(), "capture", "--harness", "claude"], input=payload, text=True, env=env,
                       capture_output=True, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((_children_cpu() - c0) * 1000)  # the hook alone: the worker is not our child to reap
        deadline = time.monotonic() + 60  # the worker, before the next run (it would compete for the CPU)
        while time.monotonic() < deadline and (len(log.read_text().splitlines()) if log.exists() else 0) <= before:
            time.sleep(0.05)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        bare.append((time.perf_counter() - t0) * 1000)
        t0, c0 = time.perf_counter(), _children_cpu()
        subprocess.run([*bootstrap_argv(), "capture", "--harness", "claude"], input="{}", text=True,
                       env={**env, "MEMVERBS_HOOKS": "off"}, capture_output=True, check=True)
        floor.append((time.perf_counter() - t0) * 1000)
        floor_cpu.append((_children_cpu() - c0) * 1000)
    walls.sort()
    return {
        "load_1min": os.getloadavg()[0],
        "bare_python_ms_p50": statistics.median(bare),
        "launcher_floor_ms_p50": statistics.median(floor),
        "hook_wall_ms_p50": statistics.median(walls),
        "hook_wall_ms_p95": walls[int(len(walls) * 0.95) - 1],
        "hook_cpu_ms_p50": statistics.median(cpus),
        "launcher_floor_cpu_ms_p50": statistics.median(floor_cpu),
    }


def _children_cpu() -> float:
    """CPU seconds of the children this process has reaped: a hook run's own, whatever the load (its wall is not)."""
    import resource  # noqa: PLC0415

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
