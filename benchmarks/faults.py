"""Durability and hooks under faults: what survives a kill -9, and what a hook does on a bad brain.

    python -m benchmarks.faults                  # 24 kills, 5 hook runs per fault; writes its RESULTS.md section
    python -m benchmarks.faults --kills 4 --hook-runs 1 --no-write

*Kill -9 durability.* Each round starts two writers on one brain — a `memverbs serve` stdio server
driven over its pipes, and an in-process CLI writer (the trusted local dispatcher) — and SIGKILLs one
of them (chosen at random) at a random moment while both are writing. A `remember` whose answer came
back is *acknowledged*; every acknowledged fact must be stored, and the brain must pass SQLite's
integrity check after all rounds.

*Hooks under faults.* `memverbs hook session-start` fed a recorded Claude Code payload against a brain
that is locked (a rollback-journal EXCLUSIVE lock, which blocks readers too), missing, or corrupt —
each run's wall time, exit code, whether stdout stayed empty, and the code it logged.

Every run is bounded: a fixed number of rounds, a cap on writes per writer, timeouts on every wait.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

from benchmarks.concurrency import CLI_WRITER
from benchmarks.processes import memverbs_cmd
from benchmarks.results_file import replace_section
from benchmarks.startup import HOOK_PAYLOAD, _env

BEGIN, END = "<!-- faults:begin -->", "<!-- faults:end -->"

# Like concurrency.MCP_WRITER, but it says which process is the server (so the round can kill it)
# and stops quietly when the server dies under it.
MCP_DRIVER = textwrap.dedent(
    """
    import json, subprocess, sys
    tag, count, cmd = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    p = subprocess.Popen(cmd + ["serve", "--surface", "verbs"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    print("PID", p.pid, flush=True)
    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\\n").encode()); p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit(0)  # the server was killed: what was acknowledged is already printed
            msg = json.loads(line)
            if msg.get("id") == i:
                return msg
    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\\n'); p.stdin.flush()
    sys.stdin.readline()
    try:
        for k in range(count):
            res = rpc(k + 1, "tools/call", {"name": "remember", "arguments": {"fact": f"{tag} fact {k}", "provenance": "bench", "entity": f"bench/{tag}"}})["result"]
            if not res.get("isError"):
                print(json.loads(res["content"][0]["text"])["id"], flush=True)
    except (BrokenPipeError, OSError):
        pass
    p.stdin.close(); p.wait()
    """
)


def _start(argv: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)


def _collect(proc: subprocess.Popen, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in proc.stdout:
            into.append(line.strip())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def kill_round(home: Path, rng: random.Random, victim: str, writes: int = 800) -> dict:
    """Two writers on one brain; `victim` ('server' or 'cli_writer') is SIGKILLed mid-stream."""
    env = _env(home)
    stamp = time.time_ns()
    mcp = _start([sys.executable, "-c", MCP_DRIVER, f"kill-mcp-{stamp}", str(writes), json.dumps(memverbs_cmd())], env)
    cli = _start([sys.executable, "-c", CLI_WRITER, f"kill-cli-{stamp}", str(writes)], env)
    mcp_lines: list[str] = []
    cli_lines: list[str] = []
    readers = [_collect(mcp, mcp_lines), _collect(cli, cli_lines)]
    deadline = time.monotonic() + 30
    while not mcp_lines and time.monotonic() < deadline:  # the server's pid comes first
        time.sleep(0.01)
    server_pid = int(mcp_lines[0].split()[1])
    time.sleep(1.0)  # the server's handshake and the writer's imports, so both start together
    for p in (mcp, cli):
        p.stdin.write("go\n")
        p.stdin.flush()
    # Kill once the victim has had a random number of writes acknowledged, plus a random few
    # milliseconds: sometimes mid-transaction, sometimes between two.
    started = time.monotonic()
    victim_lines, offset = (mcp_lines, 1) if victim == "server" else (cli_lines, 0)
    wanted = rng.randint(1, max(1, writes // 2))
    while len(victim_lines) - offset < wanted and time.monotonic() < started + 60:
        time.sleep(0.001)
    time.sleep(rng.uniform(0, 0.02))
    delay = time.monotonic() - started
    target_pid = server_pid if victim == "server" else cli.pid
    acked_before = len(victim_lines) - offset
    os.kill(target_pid, signal.SIGKILL)
    # The survivor finishes its capped stream; the victim's side ends at the kill.
    for p in (mcp, cli):
        try:
            p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for t in readers:
        t.join(timeout=10)
    acknowledged = [int(x) for x in mcp_lines[1:] + cli_lines if x.isdigit()]
    db = sqlite3.connect(home / "brain.db")
    try:
        marks = ",".join("?" * len(acknowledged)) or "NULL"
        present = {r[0] for r in db.execute(f"SELECT id FROM facts WHERE id IN ({marks})", acknowledged)}
        stored_total = db.execute(
            "SELECT count(*) FROM facts WHERE entity_slug IN (?, ?)", (f"bench/kill-mcp-{stamp}", f"bench/kill-cli-{stamp}")
        ).fetchone()[0]
    finally:
        db.close()
    return {
        "victim": victim,
        "kill_after_s": round(delay, 3),
        "victim_acknowledged_at_kill": acked_before,
        "acknowledged": len(acknowledged),
        "stored_of_acknowledged": len(present),
        "lost": len(acknowledged) - len(present),
        "stored_unacknowledged": stored_total - len(present),  # in flight at the kill: committed, answer never sent
    }


def kill_durability(home: Path, kills: int = 24, seed: int = 10, writes: int = 800) -> dict:
    rng = random.Random(seed)
    rounds = []
    for n in range(kills):
        victim = "server" if n % 2 == 0 else "cli_writer"  # half each, each at its own random moment
        rounds.append(kill_round(home, rng, victim, writes))
        print(f"  kill {n + 1}/{kills}: {rounds[-1]}", file=sys.stderr)
    db = sqlite3.connect(home / "brain.db")
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()
    return {
        "kills": len(rounds),
        "by_victim": dict(Counter(r["victim"] for r in rounds)),
        "acknowledged": sum(r["acknowledged"] for r in rounds),
        "stored_of_acknowledged": sum(r["stored_of_acknowledged"] for r in rounds),
        "lost": sum(r["lost"] for r in rounds),
        "stored_unacknowledged": sum(r["stored_unacknowledged"] for r in rounds),
        "kill_after_s": [min(r["kill_after_s"] for r in rounds), max(r["kill_after_s"] for r in rounds)],
        "victim_acknowledged_at_kill": [
            min(r["victim_acknowledged_at_kill"] for r in rounds), max(r["victim_acknowledged_at_kill"] for r in rounds)
        ],
        "integrity_check": integrity,
        "rounds": rounds,
    }


# -- hooks under faults -------------------------------------------------------------------------


def _fresh_home(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run([*memverbs_cmd(), "init"], env=_env(root), capture_output=True, check=True, timeout=60)
    subprocess.run([*memverbs_cmd(), "remember", "fault bench fact", "--provenance", "bench"], env=_env(root),
                   capture_output=True, check=True, timeout=60)
    return root


def _hook_once(home: Path, deadline_ms: int | None, **extra_env: str) -> dict:
    argv = [*memverbs_cmd(), "hook", "session-start", "--harness", "claude"]
    if deadline_ms is not None:
        argv += ["--deadline-ms", str(deadline_ms)]
    payload = dict(HOOK_PAYLOAD, session_id=f"fault-{time.time_ns()}")
    started = time.perf_counter()
    log = home / "logs" / "hooks.jsonl"
    seen = len(log.read_text().splitlines()) if log.exists() else 0
    proc = subprocess.run(argv, input=json.dumps(payload), env=_env(home, **extra_env), capture_output=True, text=True, timeout=60)
    wall = time.perf_counter() - started
    lines = log.read_text().splitlines() if log.exists() else []
    entry = json.loads(lines[-1]) if len(lines) > seen else {}  # the hook's own line: its code and its own clock
    return {"wall_s": wall, "exit": proc.returncode, "stdout_empty": proc.stdout == "", "code": entry.get("code"),
            "ms": entry.get("ms"), "traceback": "Traceback" in proc.stderr}


def hooks_under_faults(root: Path, runs: int = 5) -> list[dict]:
    rows = []
    cases = [("none (MEMVERBS_HOOKS=off)", None), ("locked", None), ("locked", 500), ("missing", None), ("corrupt", None)]
    for n, (fault, deadline_ms) in enumerate(cases):
        home = _fresh_home(root / f"fault-{n}")
        holder = None
        extra = {"MEMVERBS_HOOKS": "off"} if fault.startswith("none") else {}
        if fault == "missing":
            for suffix in ("", "-wal", "-shm"):
                (home / f"brain.db{suffix}").unlink(missing_ok=True)
        elif fault == "corrupt":
            for suffix in ("", "-wal", "-shm"):
                (home / f"brain.db{suffix}").unlink(missing_ok=True)
            (home / "brain.db").write_bytes(b"\x00not a database" * 512)
        else:
            holder = sqlite3.connect(home / "brain.db", isolation_level=None)
            holder.execute("PRAGMA journal_mode = DELETE")
            holder.execute("BEGIN EXCLUSIVE")
        try:
            samples = [_hook_once(home, deadline_ms, **extra) for _ in range(runs)]
        finally:
            if holder is not None:
                holder.execute("ROLLBACK")
                holder.close()
        walls = [s["wall_s"] for s in samples]
        rows.append({
            "fault": fault,
            "deadline_ms": deadline_ms or 2500,
            "runs": runs,
            "wall_median_s": round(statistics.median(walls), 3),
            "wall_max_s": round(max(walls), 3),
            "exit_codes": sorted({s["exit"] for s in samples}),
            "stdout_empty": all(s["stdout_empty"] for s in samples),
            "tracebacks": sum(s["traceback"] for s in samples),
            "hook_ms_max": max((s["ms"] for s in samples if s["ms"] is not None), default=None),
            "codes": dict(Counter(s["code"] for s in samples)),
        })
        print(f"  hook {fault} (deadline {rows[-1]['deadline_ms']} ms): {rows[-1]}", file=sys.stderr)
    return rows


# -- report -------------------------------------------------------------------------------------


def section(report: dict) -> str:
    k, m = report["kills"], report["machine"]
    lines = [
        BEGIN,
        "## Durability and hooks under faults",
        "",
        f"Measured {m['date']} on {m['nproc']} cores, Python {m['python']} ({m['platform']}; 1-minute load average "
        f"{m['load']} at the start — the machine was shared with other work, so wall times are noisy), with "
        f"`python -m benchmarks.faults --kills {k['kills']} --hook-runs {report['hook_runs']}`.",
        "",
        "### kill -9 durability",
        "",
        f"{k['kills']} rounds ({', '.join(f'{v} × {n}' for v, n in sorted(k['by_victim'].items()))}): each starts a "
        "`memverbs serve` stdio server driven over its pipes and an in-process CLI writer on one brain, both calling "
        "`remember` as fast as they can, and SIGKILLs one of them once it has had a random number of writes "
        f"acknowledged ({k['victim_acknowledged_at_kill'][0]}–{k['victim_acknowledged_at_kill'][1]} this run) plus a "
        f"random 0–20 ms ({k['kill_after_s'][0]}–{k['kill_after_s'][1]} s into the stream). Acknowledged = a "
        "`remember` answer came back to the client; the survivor writes its capped stream to the end.",
        "",
        "| kills | acknowledged | stored of acknowledged | lost | stored, answer never sent | integrity_check |",
        "|---|---|---|---|---|---|",
        f"| {k['kills']} | {k['acknowledged']:,} | {k['stored_of_acknowledged']:,} | {k['lost']} | "
        f"{k['stored_unacknowledged']} | {k['integrity_check']} |",
        "",
        "### Hooks under faults",
        "",
        "`memverbs hook session-start --harness claude` (a cold process, a recorded Claude Code payload) against a "
        "broken brain. Locked = another connection holds a rollback-journal EXCLUSIVE lock (readers blocked too). "
        "Wall = the whole cold process, as the harness waits for it; hook ms = the hook's own clock (what its "
        "deadline bounds), from its diagnostics line. The first row is the floor: the kill switch, so the process "
        "starts and exits without doing anything.",
        "",
        "| fault | deadline | runs | wall p50 s | wall max s | hook ms max | exit codes | stdout empty | tracebacks | logged code |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["hooks"]:
        codes = ", ".join(f"{c or '(none: kill switch)'} × {n}" for c, n in sorted(r["codes"].items(), key=lambda kv: str(kv[0])))
        lines.append(
            f"| {r['fault']} | {r['deadline_ms']} ms | {r['runs']} | {r['wall_median_s']} | {r['wall_max_s']} | "
            f"{r['hook_ms_max'] if r['hook_ms_max'] is not None else '—'} | "
            f"{', '.join(map(str, r['exit_codes']))} | {'yes' if r['stdout_empty'] else 'NO'} | {r['tracebacks']} | {codes} |"
        )
    lines.append(END)
    return "\n".join(lines)


def run(kills: int, hook_runs: int) -> dict:
    from benchmarks.__main__ import machine  # noqa: PLC0415

    info = machine()
    info["load"] = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="memverbs-faults-") as tmp:
        root = Path(tmp)
        print("kill -9 durability", file=sys.stderr)
        durability = kill_durability(_fresh_home(root / "kills"), kills)
        print("hooks under faults", file=sys.stderr)
        hooks = hooks_under_faults(root / "hooks", hook_runs)
    return {"machine": info, "kills": durability, "hooks": hooks, "hook_runs": hook_runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=24, help="kill -9 rounds (at least 20 for the recorded figures)")
    parser.add_argument("--hook-runs", type=int, default=5, help="cold hook runs per fault")
    parser.add_argument("--no-write", action="store_true", help="print the JSON only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    report = run(args.kills, args.hook_runs)
    out = Path(__file__).resolve().parent / "results" / "faults-latest.json"
    if not args.no_write:
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        replace_section(BEGIN, END, section(report))
    print(json.dumps({k: v for k, v in report.items() if k != "kills"} | {"kills": {k: v for k, v in report["kills"].items() if k != "rounds"}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
