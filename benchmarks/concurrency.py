"""Concurrency and durability (BENCHMARKS.md §4): numbers, not timings.

8 writers × 1,000 `remember` at once on one brain — 4 MCP stdio servers driven
over their pipes and 4 in-process CLI callers — must store 8,000 facts with 0
errors. Then a writer is killed with SIGKILL mid-stream: every fact whose
`remember` had returned must be in the brain.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from benchmarks.processes import memverbs_cmd
from benchmarks.startup import _env

CLI_WRITER = textwrap.dedent(
    """
    import sys
    from memverbs.server.runtime import Runtime
    tag, count = sys.argv[1], int(sys.argv[2])
    d = Runtime().local_dispatcher()
    sys.stdin.readline()  # wait for the start signal so all writers overlap
    errors = 0
    for k in range(count):
        out = d.call("remember", {"fact": f"{tag} fact {k}", "provenance": "bench", "entity": f"bench/{tag}"})
        if out.is_error:
            errors += 1
            print("ERROR", out.body, file=sys.stderr)
        else:
            print(out.body["id"], flush=True)
    print("DONE", errors, file=sys.stderr)
    """
)

MCP_WRITER = textwrap.dedent(
    """
    import json, subprocess, sys
    tag, count, cmd = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    p = subprocess.Popen(cmd + ["serve", "--surface", "verbs"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\\n").encode()); p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == i:
                return msg
    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\\n'); p.stdin.flush()
    sys.stdin.readline()
    errors = 0
    for k in range(count):
        res = rpc(k + 1, "tools/call", {"name": "remember", "arguments": {"fact": f"{tag} fact {k}", "provenance": "bench", "entity": f"bench/{tag}"}})["result"]
        body = json.loads(res["content"][0]["text"])
        if res.get("isError"):
            errors += 1
            print("ERROR", body, file=sys.stderr)
        else:
            print(body["id"], flush=True)
    p.stdin.close(); p.wait()
    print("DONE", errors, file=sys.stderr)
    """
)


def writers(home: Path, per_writer: int, n_mcp: int = 4, n_cli: int = 4) -> dict:
    env = _env(home)
    procs = []
    for w in range(n_mcp + n_cli):
        tag = f"w{w}-{time.time_ns()}"
        code = MCP_WRITER if w < n_mcp else CLI_WRITER
        argv = [sys.executable, "-c", code, tag, str(per_writer)] + ([json.dumps(memverbs_cmd())] if w < n_mcp else [])
        procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True))
    time.sleep(1.5 if n_mcp else 0.2)  # let the MCP servers finish their handshakes: the writes must overlap
    start = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    ids, errors, locked = set(), 0, 0
    for p in procs:
        out, err = p.communicate(timeout=600)
        ids |= set(out.split())
        errors += sum(1 for line in err.splitlines() if line.startswith("ERROR"))
        locked += err.count("locked")
    elapsed = time.perf_counter() - start
    db = sqlite3.connect(home / "brain.db")
    stored = db.execute("SELECT count(*) FROM facts WHERE provenance = 'bench' AND entity_slug LIKE 'bench/w%'").fetchone()[0]
    db.close()
    return {
        "writers": f"{n_mcp} MCP stdio + {n_cli} CLI",
        "attempted": per_writer * (n_mcp + n_cli),
        "acknowledged": len(ids),
        "stored": stored,
        "errors": errors,
        "locked_messages": locked,
        "facts_per_s": round(len(ids) / elapsed, 1),
    }


def kill_mid_stream(home: Path, count: int = 5000) -> dict:
    env = _env(home)
    tag = f"killed-{time.time_ns()}"
    proc = subprocess.Popen([sys.executable, "-c", CLI_WRITER, tag, str(count)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    acknowledged = []
    for line in proc.stdout:
        acknowledged.append(int(line))
        if len(acknowledged) == 300:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    db = sqlite3.connect(home / "brain.db")
    present = {r[0] for r in db.execute("SELECT id FROM facts WHERE entity_slug = ?", (f"bench/{tag}",))}
    db.close()
    lost = [i for i in acknowledged if i not in present]
    return {"acknowledged_before_kill": len(acknowledged), "present": len(present), "lost": len(lost)}
