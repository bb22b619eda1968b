"""CPU per cold hook process, two checkouts interleaved: `python -m benchmarks.hook_cpu [--before DIR]`.

A shared machine makes walls noisy; a process's own CPU time (user + system, `getrusage` of the
reaped child) barely moves with load. Each round runs, for every launch: a session start (new
session), then — after one fact is remembered on a standing entity and delta's in-flight window has
passed — a heartbeat that delivers it, and (remote rows, `--remote`) the same against `serve --http`
on loopback. Launches are the lean launcher the installers write (hooks/launcher.py) for this checkout
and, with `--before DIR`, the same bootstrap pointed at another checkout of the repository (say
`git archive <commit> | tar -x -C DIR`), so before and after run on the same interpreter and home.
The home is a fresh one with a fact on each of 8 entities, or with `--smoke` a copy of the smoke corpus
(benchmarks/corpus.py: pages with timelines, links and aliases) with its 8 target people standing.
Prints median / fastest CPU and wall in ms, the 1-minute load before and after.
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

from memverbs.hooks.launcher import bootstrap_argv

FRESH_ENTITIES = [f"people/cpu-person-{i}" for i in range(8)]
SMOKE_ENTITIES = [f"people/target-person-{i}" for i in range(8)]


def launcher_for(checkout: str | None) -> list[str]:
    argv = bootstrap_argv()
    if checkout is None:
        return argv
    import sysconfig  # noqa: PLC0415

    dirs = json.dumps([os.path.abspath(checkout), sysconfig.get_paths()["purelib"]])
    code = argv[4].split(";", 2)
    return [*argv[:4], f"{code[0]};p={dirs};{code[2]}", *argv[5:]]


def _cpu_run(argv: list[str], payload: dict, env: dict) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=30)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu * 1000, wall * 1000, proc.stdout


def _memverbs(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "memverbs", *args], env=env, check=True, capture_output=True)


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} / {min(values):.0f}"


def _measure(rows: dict[str, dict[str, list]], row: str, argv: list[str], payload: dict, env: dict, *, expect: str) -> None:
    """One cold hook run into `rows[row]`; a run that did not print `expect` measured no real work."""
    cpu, wall, out = _cpu_run(argv, payload, env)
    if expect not in out:
        raise RuntimeError(f"{row}: the hook printed no {expect!r}")
    cell = rows.setdefault(row, {"cpu": [], "wall": []})
    cell["cpu"].append(cpu)
    cell["wall"].append(wall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hook_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another checkout of the repository, run interleaved with this one")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--remote", action="store_true", help="also a remote brain's session start (serve --http)")
    parser.add_argument("--smoke", action="store_true", help="a copy of the smoke corpus rather than a fresh home")
    args = parser.parse_args(argv)
    launches = {"after": launcher_for(None)}
    if args.before:
        launches = {"before": launcher_for(args.before), **launches}
    load = [round(os.getloadavg()[0], 2)]
    with tempfile.TemporaryDirectory(prefix="memverbs-hookcpu-") as tmp:
        home = Path(tmp) / "home"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        env["MEMVERBS_HOME"] = str(home)
        entities = SMOKE_ENTITIES if args.smoke else FRESH_ENTITIES
        env["MEMVERBS_HOOKS__ENTITIES"] = ",".join(entities)
        if args.smoke:
            from benchmarks import corpus  # noqa: PLC0415

            corpus.working_copy(corpus.SIZES["smoke"], home)
        else:
            _memverbs(env, "init")
            for slug in entities:
                _memverbs(env, "remember", f"{slug} keeps a standing fact", "--provenance", "bench", "--entity", slug)
        rows: dict[str, dict[str, list]] = {}
        server = None
        remote_env = None
        if args.remote:
            from benchmarks.http_load import RemoteServer, make_token  # noqa: PLC0415

            server = RemoteServer(home).__enter__()
            client = Path(tmp) / "client"
            receipt = client / "integrations" / "claude" / "remote-receipt.json"
            receipt.parent.mkdir(parents=True)
            receipt.write_text(json.dumps({"remote_url": server.url}))
            remote_env = dict(env, MEMVERBS_HOME=str(client), MEMVERBS_REMOTE_TOKEN=make_token(home, f"cpu-{time.time_ns()}"),
                              MEMVERBS_HOOKS__ENTITIES=",".join(entities))
        try:
            time.sleep(2.2)
            for i in range(args.runs):
                sessions = {}
                for label, hook in launches.items():
                    sid = f"cpu-{label}-{i}-{time.time_ns()}"
                    sessions[label] = sid
                    start = {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup"}
                    argv = [*hook, "session-start", "--harness", "claude"]
                    _measure(rows, f"{label}: session-start", argv, start, env, expect=entities[0])
                    if remote_env is not None:
                        _measure(rows, f"{label}: remote session-start", argv, start, remote_env, expect=entities[0])
                fact = f"Round {i} brings news for {entities[i % 8]}"
                _memverbs(env, "remember", fact, "--provenance", "bench", "--entity", entities[i % 8])
                time.sleep(2.2)
                for label, hook in launches.items():
                    beat = {"session_id": sessions[label], "hook_event_name": "UserPromptSubmit", "prompt": "next?"}
                    _measure(rows, f"{label}: delivering heartbeat", [*hook, "heartbeat", "--harness", "claude"], beat, env,
                             expect=fact)
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    load.append(round(os.getloadavg()[0], 2))
    print(f"1-minute load {load[0]} -> {load[1]}, {args.runs} rounds, {'smoke corpus' if args.smoke else 'fresh home'}; "
          "median / fastest ms")
    for key in sorted(rows, key=lambda k: (k.split(": ")[1], k)):
        print(f"  {key:42} CPU {_summary(rows[key]['cpu']):>10}   wall {_summary(rows[key]['wall']):>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
