"""What a harness pays on every session (BENCHMARKS.md §3): server cold start, hook wall time, RSS.

Every process is a cold `memverbs` spawned the way an installer wires it; the
numbers are wall-clock medians, with what each run printed checked for real work.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.processes import memverbs_cmd

HOOK_PAYLOAD = {
    "session_id": "bench-session",
    "transcript_path": "/tmp/bench.jsonl",
    "cwd": "/tmp",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def _env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    env.update(extra)
    return env


def _read_reply(proc, want_id: int) -> dict:
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-500:]}")
        msg = json.loads(line)
        if msg.get("id") == want_id:
            return msg


def server_cold_start(home: Path, runs: int = 5) -> dict:
    marks = {"initialize": [], "tools_list": [], "first_tool_result": []}
    rss = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([*memverbs_cmd(), "serve", "--surface", "verbs"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(home))
        try:
            def send(msg: dict, proc: subprocess.Popen = proc) -> None:
                proc.stdin.write((json.dumps(msg) + "\n").encode())
                proc.stdin.flush()

            send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
            _read_reply(proc, 1)
            marks["initialize"].append(time.perf_counter() - start)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            tools = _read_reply(proc, 2)["result"]["tools"]
            marks["tools_list"].append(time.perf_counter() - start)
            send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "entity", "arguments": {"name": "tp7"}}})
            reply = _read_reply(proc, 3)
            marks["first_tool_result"].append(time.perf_counter() - start)
            body = json.loads(reply["result"]["content"][0]["text"])
            if len(tools) != 7 or not body.get("found"):
                raise RuntimeError(f"cold start did no real work: {len(tools)} tools, entity {body}")
            # Peak RSS after a second call, once the full settings have been checked (after the first result).
            time.sleep(2.0)
            send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "entity", "arguments": {"name": "tp8"}}})
            _read_reply(proc, 4)
            rss.append(peak_rss_mb(proc.pid))
        finally:
            proc.kill()
            proc.wait()
    out = {k: {"median_s": round(statistics.median(v), 3), "runs": [round(x, 3) for x in v]} for k, v in marks.items()}
    out["peak_rss_mb"] = max(rss)
    return out


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def hook_argv(hook: list[str] | None) -> list[str]:
    """The argv prefix up to and including `hook`: the console script by default, or a launcher's
    (hooks/launcher.py's `bootstrap_argv`, what the installers write)."""
    return list(hook) if hook else [*memverbs_cmd(), "hook"]


def _logged(home: Path) -> dict:
    return json.loads((home / "logs" / "hooks.jsonl").read_text().splitlines()[-1])


def _summary(walls: list[float], own_ms: list[int]) -> dict:
    return {"median_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
            "runs": [round(w, 3) for w in walls], "hook_ms_median": statistics.median(own_ms)}


def hook_wall(home: Path, moment: str, runs: int = 10, hook: list[str] | None = None) -> dict:
    """Cold `memverbs hook` runs fed a recorded Claude Code payload; checks each printed a real answer.
    `hook_ms_median` is the hook's own clock (its log line), the wall minus the interpreter's start."""
    payload = dict(HOOK_PAYLOAD)
    if moment == "heartbeat":
        payload.update(hook_event_name="UserPromptSubmit", prompt="next step?")
    env = _env(home, MEMVERBS_HOOKS__ENTITIES=",".join(f"people/target-person-{i}" for i in range(8)))
    walls, sizes, own = [], [], []
    if moment == "heartbeat":  # the session exists first: a heartbeat reports what changed since it began
        subprocess.run([*hook_argv(hook), "session-start", "--harness", "claude"], input=json.dumps(HOOK_PAYLOAD),
                       env=env, capture_output=True, text=True, timeout=30, check=True)
    for k in range(runs):
        if moment == "heartbeat":
            # Something changed since the last wake, so each heartbeat has real work to print.
            subprocess.run([*memverbs_cmd(), "remember", f"bench heartbeat fact {k} {time.time_ns()}", "--provenance", "bench",
                            "--entity", "people/target-person-3"], env=env, check=True, capture_output=True)
        start = time.perf_counter()
        proc = subprocess.run([*hook_argv(hook), moment, "--harness", "claude"], input=json.dumps(payload),
                              env=env, capture_output=True, text=True, timeout=30)
        walls.append(time.perf_counter() - start)
        own.append(_logged(home)["ms"])
        text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else ""
        if moment == "session-start" and text.count("→") != 8:
            raise RuntimeError(f"session-start hook printed {text.count('→')} cards, not 8")
        if moment == "heartbeat" and "bench heartbeat fact" not in text:
            raise RuntimeError("heartbeat printed no change")
        sizes.append(len(proc.stdout))
    return _summary(walls, own) | {"output_chars": max(sizes)}


def heartbeat_unchanged_wall(home: Path, runs: int = 10, hook: list[str] | None = None) -> dict:
    """Cold heartbeats when nothing changed: the one-read change check (each run's logged code is checked)."""
    env = _env(home)
    payload = dict(HOOK_PAYLOAD, session_id=f"bench-quiet-{time.time_ns()}")
    beat = dict(payload, hook_event_name="UserPromptSubmit", prompt="next step?")
    subprocess.run([*hook_argv(hook), "session-start", "--harness", "claude"], input=json.dumps(payload),
                   env=env, capture_output=True, text=True, timeout=30, check=True)
    time.sleep(2.5)  # past delta's in-flight lag: writes just before the start no longer count as "maybe"
    subprocess.run([*hook_argv(hook), "heartbeat", "--harness", "claude"], input=json.dumps(beat),
                   env=env, capture_output=True, text=True, timeout=30)
    time.sleep(2.5)
    walls, own = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([*hook_argv(hook), "heartbeat", "--harness", "claude"], input=json.dumps(beat),
                              env=env, capture_output=True, text=True, timeout=30)
        walls.append(time.perf_counter() - start)
        line = _logged(home)
        own.append(line["ms"])
        if proc.stdout or line["code"] != "unchanged":
            raise RuntimeError(f"an unchanged heartbeat logged {line['code']}")
    return _summary(walls, own)


def floor_wall(home: Path, runs: int = 10, hook: list[str] | None = None) -> dict:
    """The launcher's floor: the kill switch (`MEMVERBS_HOOKS=off`), so the process starts, imports the
    runner and exits having done nothing."""
    env = _env(home, MEMVERBS_HOOKS="off")
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([*hook_argv(hook), "heartbeat", "--harness", "claude"], input=b"{}", env=env,
                       capture_output=True, timeout=30, check=True)
        walls.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(walls), 3), "runs": [round(w, 3) for w in walls]}


def remote_hook_wall(home: Path, runs: int = 10, hook: list[str] | None = None) -> dict:
    """Cold hooks of a harness wired to a remote brain: `serve --http` on loopback over `home`,
    a client home holding only the remote receipt, the token in $MEMVERBS_REMOTE_TOKEN."""
    import tempfile  # noqa: PLC0415

    from benchmarks.http_load import RemoteServer, make_token  # noqa: PLC0415

    out = {}
    with RemoteServer(home) as server, tempfile.TemporaryDirectory(prefix="memverbs-client-") as tmp:
        client = Path(tmp)
        receipt = client / "integrations" / "claude" / "remote-receipt.json"
        receipt.parent.mkdir(parents=True)
        receipt.write_text(json.dumps({"remote_url": server.url}))
        env = _env(client, MEMVERBS_REMOTE_TOKEN=make_token(home, f"bench-{time.time_ns()}"),
                   MEMVERBS_HOOKS__ENTITIES=",".join(f"people/target-person-{i}" for i in range(8)))
        server_env = _env(home)
        for moment in ("session-start", "heartbeat"):
            walls, own = [], []
            for k in range(runs):
                payload = dict(HOOK_PAYLOAD, session_id=f"bench-remote-{moment}-{k}-{time.time_ns()}")
                if moment == "heartbeat":
                    payload = dict(HOOK_PAYLOAD, session_id="bench-remote-beat", hook_event_name="UserPromptSubmit")
                    if k == 0:
                        subprocess.run([*hook_argv(hook), "session-start", "--harness", "claude"],
                                       input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=30)
                    subprocess.run([*memverbs_cmd(), "remember", f"bench remote fact {k} {time.time_ns()}", "--provenance", "bench",
                                    "--entity", "people/target-person-3"], env=server_env, check=True, capture_output=True)
                start = time.perf_counter()
                proc = subprocess.run([*hook_argv(hook), moment, "--harness", "claude"], input=json.dumps(payload),
                                      env=env, capture_output=True, text=True, timeout=30)
                walls.append(time.perf_counter() - start)
                line = _logged(client)
                own.append(line["ms"])
                if line["code"] != "ok" or not proc.stdout:
                    raise RuntimeError(f"remote {moment} hook logged {line['code']}")
            out[moment] = _summary(walls, own)
    return out


def import_times() -> dict:
    """Module import cost of the two start-up paths (`python -X importtime`, cumulative µs)."""
    out = {}
    for label, module in (("hook path", "memverbs.hooks.runner"), ("server path", "memverbs.server.transport.stdio")):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True)
        total = 0
        for line in proc.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip() == module:
                total = int(parts[1])
        out[label] = {"module": module, "cumulative_ms": round(total / 1000, 1)}
    return out
