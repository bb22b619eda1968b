"""Recall-with-query latency at 10k facts, the op layer and MCP stdio side by side, before and after.

    python -m benchmarks.recall_latency build HOME [--facts N]          # grow a brain once (in-process)
    python -m benchmarks.recall_latency run HOME [--checkout DIR ...] [--rounds N] [--profile]

`build` fills a brain the way benchmarks/retrieval_conversations.py's `latency_at_scale` does
(every LoCoMo turn one `remember` with its speaker and session date, every session one page,
the conversations stored again under other speaker names until the brain holds N facts), but
through the dispatcher in-process, which is quicker and stores the same rows.

`run` measures the 300 recall-with-query probes of `latency_at_scale` (after 20 warm-up calls)
on a fresh copy of that brain for each checkout (this one when none is given; `--checkout` adds
another, e.g. an export of main for a "before"), round after round, the checkouts interleaved
so they share the machine's load:

* op layer: the dispatcher called in-process as an MCP caller (the untrusted world view),
  wall time and the process's CPU time per call;
* stdio: `memverbs serve` over MCP stdio, the client's wall time per call.

Each measurement runs in its own process, with the checkout's package first on the path.
`--profile` prints cProfile's top functions of one op-layer round instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.retrieval_conversations import ANSWERABLE, conversations, fill
from benchmarks.verbs import percentiles

HERE = Path(__file__).resolve().parent.parent
DATA = HERE.parent / "shared" / "data" / "locomo-dev"  # as retrieval_conversations finds it, from this file
WARMUP = 20
PROBES = 300


class _InProcess:
    """retrieval_conversations' client interface over an in-process MCP dispatcher."""

    def __init__(self, dispatcher) -> None:
        self.dispatcher = dispatcher

    def call(self, tool: str, args: dict) -> tuple[dict, float, bool]:
        start = time.perf_counter()
        out = self.dispatcher.call(tool, args)
        return out.body, (time.perf_counter() - start) * 1000, out.is_error


def _runtime(home: Path):
    from memverbs.server.context import Caller  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))
    return runtime, runtime.mcp_dispatcher("full", Caller.mcp(runtime.source))


def questions(data: Path = DATA) -> list[str]:
    return [q["question"] for _, conv in conversations(data) for q in conv["qa"] if q.get("category") in ANSWERABLE][:PROBES]


def build(home: Path, target: int, data: Path = DATA) -> int:
    subprocess.run([sys.executable, "-m", "memverbs", "init"], env=_env(home), check=True, capture_output=True)
    runtime, dispatcher = _runtime(home)
    client, facts, copy = _InProcess(dispatcher), 0, 0
    try:
        while facts < target:
            for cid, conv in conversations(data):
                facts += len(fill(client, cid, conv, copy))  # type: ignore[arg-type]
                if facts >= target:
                    break
            copy += 1
    finally:
        runtime.close()
    return facts


def _env(home: Path, checkout: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    if checkout is not None:
        env["PYTHONPATH"] = f"{checkout}{os.pathsep}{HERE}"
    return env


def op_layer(home: Path, profile: bool, data: Path = DATA) -> dict:
    """300 probes in this process; wall and CPU milliseconds per call."""
    runtime, dispatcher = _runtime(home)
    qs = questions(data)
    walls, cpus = [], []
    try:
        for q in qs[:WARMUP]:
            dispatcher.call("recall", {"query": q, "limit": 10})
        prof = None
        if profile:
            import cProfile  # noqa: PLC0415

            prof = cProfile.Profile()
            prof.enable()
        for q in qs:
            c0, w0 = time.process_time(), time.perf_counter()
            out = dispatcher.call("recall", {"query": q, "limit": 10})
            walls.append((time.perf_counter() - w0) * 1000)
            cpus.append((time.process_time() - c0) * 1000)
            if out.is_error:
                raise RuntimeError(out.body)
        if prof is not None:
            import pstats  # noqa: PLC0415

            prof.disable()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(45)
    finally:
        runtime.close()
    return {"wall": percentiles(walls), "cpu": percentiles(cpus)}


def over_stdio(home: Path, env: dict, data: Path = DATA, *, checkout: str = "") -> dict:
    """300 probes over MCP stdio. The server runs in `checkout` (when given): `python -m` puts its
    working directory first on the path, so that is the tree it serves, whatever PYTHONPATH says."""
    from benchmarks.stdio_client import StdioClient  # noqa: PLC0415

    qs = questions(data)
    with StdioClient([sys.executable, "-m", "memverbs", "serve"], env=env, cwd=Path(checkout) if checkout else None) as client:
        for q in qs[:WARMUP]:
            client.call("recall", {"query": q, "limit": 10})
        walls = []
        for q in qs:
            _, ms, is_error = client.call("recall", {"query": q, "limit": 10})
            if is_error:
                raise RuntimeError(f"recall failed over stdio: {q}")
            walls.append(ms)
    return {"wall": percentiles(walls)}


def _load() -> float:
    return os.getloadavg()[0]


def _measure(brain: Path, checkout: Path | None, how: str, profile: bool) -> dict:
    """One measurement on a fresh copy of `brain`, in a child process with `checkout` first on its path."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(brain, home)
        env = _env(home, checkout)
        # This file, whichever checkout's package is first on the path (an older one may not have it).
        code = ("import json, sys, importlib.util as u; from pathlib import Path; "
                f"s = u.spec_from_file_location('recall_latency', {__file__!r}); r = u.module_from_spec(s); "
                "s.loader.exec_module(r); "
                f"print(json.dumps(r.op_layer(Path(sys.argv[1]), {profile}) if sys.argv[2] == 'op' "
                "else r.over_stdio(Path(sys.argv[1]), dict(__import__('os').environ), checkout=sys.argv[3])))")
        if checkout is not None:  # the checkout's own package, not the editable install
            code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
                    f"sys.path.insert(0, {str(checkout)!r}); " + code)
        load = _load()
        done = subprocess.run([sys.executable, "-c", code, str(home), how, str(checkout or "")], env=env, cwd=HERE,
                              capture_output=True,
                              text=True, check=False)
        if done.returncode:
            raise RuntimeError(done.stderr[-3000:])
        if profile:
            print(done.stderr, file=sys.stderr)
        return json.loads(done.stdout.strip().splitlines()[-1]) | {"load": [round(load, 1), round(_load(), 1)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall_latency", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("home", type=Path)
    b.add_argument("--facts", type=int, default=10000)
    r = sub.add_parser("run")
    r.add_argument("home", type=Path)
    r.add_argument("--checkout", type=Path, action="append", default=[], help="another checkout to measure (repeatable)")
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--ways", default="op,stdio")
    r.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: no LoCoMo data at {DATA}")
        return 0
    if args.cmd == "build":
        print(f"{build(args.home, args.facts)} facts in {args.home}")
        return 0
    runs: list[tuple[str, Path | None]] = [(str(c), c.resolve()) for c in args.checkout] + [("this", None)]
    if args.profile:
        _measure(args.home, runs[-1][1] if len(runs) == 1 else runs[0][1], "op", True)
        return 0
    for n in range(args.rounds):
        for how in args.ways.split(","):
            for name, checkout in runs:
                out = _measure(args.home, checkout, how, False)
                cpu = out.get("cpu")
                print(f"round {n + 1} {how:5} {name:28} wall p50 {out['wall']['p50_ms']:6.2f} p99 {out['wall']['p99_ms']:6.2f}"
                      + (f"  cpu p50 {cpu['p50_ms']:6.2f} p99 {cpu['p99_ms']:6.2f}" if cpu else "")
                      + f"  load {out['load'][0]} -> {out['load'][1]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
