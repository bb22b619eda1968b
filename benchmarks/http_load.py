"""Remote (HTTP) load: N concurrent MCP clients against a real `memverbs serve --http` on loopback.

    python -m benchmarks.http_load                          # 50 clients × 20 s; writes its RESULTS.md section
    python -m benchmarks.http_load --clients 50 --seconds 5 --no-write
    python -m benchmarks.http_load --clients 200 --slow 800 --seconds 20    # hostile-client load check

Each client has its own HTTP connection and token-authenticated MCP traffic
(tools/call over streamable HTTP, stateless JSON responses) cycling through a
read-heavy verb mix with one write in five. The run is bounded twice — a
deadline and a per-client request cap — and talks only to 127.0.0.1. Reported:
HTTP status counts (no 5xx is the bar), tool errors, throughput and the
client-side latency of each call (p50 / p95 / p99 = value at index ceil(q·n)−1).
The test suite runs a short smoke of the same load (`tests/server/transport/test_http.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.processes import memverbs_cmd
from benchmarks.results_file import replace_section

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- http-load:begin -->", "<!-- http-load:end -->"
BANNER = re.compile(r"listening at (http://\S+/mcp)")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENTITIES = 50


class RemoteServer:
    """`memverbs serve --http --port 0 …` as a real subprocess; always terminated on exit."""

    def __init__(self, home: Path, *args: str, env: dict | None = None, startup_s: float = 30.0) -> None:
        self.home = Path(home)
        self.args = args
        self.env = dict(env if env is not None else os.environ)
        self.env["MEMVERBS_HOME"] = str(self.home)
        self.startup_s = startup_s
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.returncode: int | None = None
        self._log = self.home / f"http-server-{os.getpid()}-{id(self)}.log"

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def stderr(self) -> str:
        try:
            return self._log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def __enter__(self) -> RemoteServer:
        cmd = [*memverbs_cmd(), "serve", "--http", "--host", "127.0.0.1", "--port", "0", *self.args]
        with open(self._log, "wb") as log:
            self.proc = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            found = BANNER.search(self.stderr())
            if found:
                self.url = found.group(1)
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"memverbs serve --http did not start:\n{self.stderr()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (graceful), then SIGKILL if it does not end in time; returns the exit status."""
        if self.proc is None:
            return self.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.returncode = self.proc.returncode
        self.proc = None
        return self.returncode

    def __exit__(self, *exc) -> None:
        self.stop()


def call_body(request_id: int, tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def tool_reply(response, limit: int = 200) -> tuple[dict, dict]:
    """A `tools/call` reply's JSON-RPC result and its parsed payload; ValueError (the status and the start of
    the body) when the reply is not one."""
    try:
        result = response.json()["result"]
        return result, json.loads(result["content"][0]["text"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"HTTP {response.status_code}: {response.text[:limit]}") from exc


def mix(client: int, k: int) -> tuple[str, dict]:
    """The k-th call of a client: four reads to one write, over the seeded entities."""
    target = f"people/load-target-{(client * 7 + k) % ENTITIES}"
    step = k % 5
    if step == 0:
        return "entity", {"name": target}
    if step == 1:
        return "recall", {"entity": target, "budget_tokens": 800}
    if step == 2:
        return "context_pack", {"entities": f"{target},people/load-target-{(client + k + 1) % ENTITIES}", "budget_tokens": 1500}
    if step == 3:
        return "delta", {"session_id": f"load-client-{client}"}
    return "remember", {"fact": f"load client {client} call {k}", "provenance": "http load benchmark", "entity": target}


def percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return float("nan")
    return sorted_ms[max(0, math.ceil(q * len(sorted_ms)) - 1)]


async def slowloris(url: str, count: int, stop: asyncio.Event, dropped: Counter) -> None:
    """`count` connections that trickle a request head a byte every 2 s, reconnecting when dropped."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(url)

    async def one() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            except OSError:
                dropped["refused"] += 1
                await asyncio.sleep(1)
                continue
            head = f"POST {parts.path} HTTP/1.1\r\nHost: {parts.hostname}\r\nX-Slow: ".encode()
            try:
                writer.write(head)
                while not stop.is_set():
                    await asyncio.sleep(2)
                    writer.write(b"a")
                    await writer.drain()
                    if reader.at_eof():
                        raise ConnectionResetError
            except (OSError, ConnectionError):
                dropped["dropped"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(one() for _ in range(count)))


async def run_load(url: str, token: str, *, clients: int = 50, seconds: float = 5.0,
                   max_requests_per_client: int = 5000, timeout_s: float = 30.0, slow: int = 0) -> dict:
    """Drive `clients` concurrent connections until the deadline; every number is client-side."""
    import httpx  # noqa: PLC0415

    latencies: list[float] = []
    statuses: Counter = Counter()
    transport_errors: list[str] = []
    tool_errors: list[str] = []
    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    start_gate = asyncio.Event()

    async def client(n: int) -> None:
        async with httpx.AsyncClient(headers=headers, timeout=timeout_s, limits=httpx.Limits(max_connections=1)) as http:
            await start_gate.wait()
            deadline = time.monotonic() + seconds
            k = 0
            while time.monotonic() < deadline and k < max_requests_per_client:
                tool, arguments = mix(n, k)
                t0 = time.perf_counter()
                try:
                    response = await http.post(url, json=call_body(k + 1, tool, arguments))
                except httpx.HTTPError as exc:
                    transport_errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                    k += 1
                    continue
                latencies.append((time.perf_counter() - t0) * 1000)
                statuses[response.status_code] += 1
                if response.status_code == 200:
                    result = response.json().get("result") or {}
                    if result.get("isError"):
                        tool_errors.append(f"{tool}: {result['content'][0]['text'][:200]}")
                k += 1

    stop = asyncio.Event()
    dropped: Counter = Counter()
    health: Counter = Counter()

    async def probe() -> None:
        async with httpx.AsyncClient(timeout=timeout_s) as http:
            while not stop.is_set():
                try:
                    ok = (await http.get(url.removesuffix("/mcp") + "/health")).status_code == 200
                except httpx.HTTPError:
                    ok = False
                health["ok" if ok else "failed"] += 1
                await asyncio.sleep(0.5)

    background = [asyncio.create_task(slowloris(url, slow, stop, dropped)), asyncio.create_task(probe())] if slow else []
    if slow:
        await asyncio.sleep(3)  # the slow connections are open and trickling before the clients start
    tasks = [asyncio.create_task(client(n)) for n in range(clients)]
    await asyncio.sleep(0.2)  # let every client open its connection pool before the clock starts
    began = time.perf_counter()
    start_gate.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - began
    stop.set()
    for task in background:
        task.cancel()
    await asyncio.gather(*background, return_exceptions=True)
    ordered = sorted(latencies)
    return {
        "clients": clients,
        "seconds": seconds,
        "slow_connections": slow,
        "slow_dropped_by_server": dropped.get("dropped", 0),
        "slow_refused": dropped.get("refused", 0),
        "health_ok": health.get("ok", 0),
        "health_failed": health.get("failed", 0),
        "wall_s": round(wall, 2),
        "requests": len(latencies) + len(transport_errors),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "status_5xx": sum(v for k, v in statuses.items() if k >= 500),
        "transport_errors": len(transport_errors),
        "transport_error_samples": transport_errors[:5],
        "tool_errors": len(tool_errors),
        "tool_error_samples": tool_errors[:5],
        "requests_per_s": round(len(latencies) / wall, 1) if wall else 0.0,
        "p50_ms": round(percentile(ordered, 0.50), 2),
        "p95_ms": round(percentile(ordered, 0.95), 2),
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "max_ms": round(ordered[-1], 2) if ordered else float("nan"),
    }


def seed(home: Path) -> None:
    """A brain with ENTITIES people, each with a page, an alias and a few facts."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))
    runtime.create_brain()
    local = runtime.local_dispatcher()
    for i in range(ENTITIES):
        slug = f"people/load-target-{i}"
        content = f"---\ntitle: Load Target {i}\ntype: person\n---\n\n# Load Target {i}\n\nRuns area {i}.\n"
        assert not local.call("put_page", {"slug": slug, "content": content}).is_error
        local.call("add_alias", {"slug": slug, "alias": f"lt{i}"})
        for g in range(4):
            local.call("remember", {"fact": f"load fact {g} about target {i}", "provenance": "seed", "entity": slug})
    runtime.close()


def make_token(home: Path, name: str, *, scopes: str = "read,write", surface: str = "full", source: str = "default") -> str:
    """Mint a token straight into the brain (what `memverbs auth create` does)."""
    from memverbs.server import tokens  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    token = tokens.mint()
    brain = Runtime(Home(Path(home))).open_brain()  # the home's configured brain (brain.url)
    try:
        brain.create_token(name=name, token_hash=tokens.digest(token), token_hint=tokens.hint(token),
                           scopes=tokens.scopes_text(tokens.parse_scopes(scopes)),
                           surface=surface, source_id=source, client_id=tokens.client_id_for(name), now=now_ms())
    finally:
        brain.close()
    return token


def machine() -> dict:
    import platform  # noqa: PLC0415

    return {"nproc": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(terse=True),
            "date": time.strftime("%Y-%m-%d"), "load_average_1m": round(os.getloadavg()[0], 2)}


def markdown(report: dict) -> str:
    m, r = report["machine"], report["load"]
    rows = [report["single"], r] if report.get("single") else [r]
    return "\n".join([
        BEGIN,
        "## Remote (HTTP)",
        "",
        f"Measured {m['date']} on {m['nproc']} cores, Python {m['python']} ({m['platform']}; 1-minute load average "
        f"{m['load_average_1m']} at the start), with `python -m benchmarks.http_load --clients {r['clients']} "
        f"--seconds {r['seconds']:g}" + (f" --slow {r['slow_connections']}" if r.get("slow_connections") else "")
        + "`: a real `memverbs serve --http` on 127.0.0.1 (stateless streamable HTTP, JSON "
        "responses, bearer token checked on every request), each client on its own connection, calls cycling "
        "entity / recall / context_pack / delta / remember (one write in five) over "
        f"{ENTITIES} seeded people. The load generator shares the machine's cores with the server; latency is "
        "client-side, per call. The single-client row is the per-call cost without contention.",
        "",
        "| clients | requests | requests/s | p50 ms | p95 ms | p99 ms | max ms | 5xx | transport errors | tool errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {x['clients']} | {x['requests']:,} | {x['requests_per_s']:,} | {x['p50_ms']} | {x['p95_ms']} | "
            f"{x['p99_ms']} | {x['max_ms']} | {x['status_5xx']} | {x['transport_errors']} | {x['tool_errors']} |"
            for x in rows
        ),
        "",
        f"HTTP statuses ({r['clients']} clients): {', '.join(f'{k}: {v:,}' for k, v in r['statuses'].items())}.",
        *([
            "",
            f"Beside the clients, {r['slow_connections']} slow-loris connections trickled a request head one byte every "
            "2 s (reconnecting when dropped) while `/health` was probed every 0.5 s: the server dropped "
            f"{r['slow_dropped_by_server']:,} of them at the head deadline, refused {r['slow_refused']:,} connects, and "
            f"answered `/health` {r['health_ok']:,} times ({r['health_failed']:,} failures).",
        ] if r.get("slow_connections") else []),
        END,
    ])


def write_results(report: dict) -> None:
    """Replace only this benchmark's section of RESULTS.md (other sections belong to other runs)."""
    replace_section(BEGIN, END, markdown(report))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_load", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--slow", type=int, default=0, help="slow-loris connections held open beside the clients")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    started_on = machine()
    with tempfile.TemporaryDirectory(prefix="memverbs-http-load-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        print("seeding", file=sys.stderr)
        seed(home)
        token = make_token(home, "load")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        with RemoteServer(home, env=env) as server:
            print(f"warming up {server.url}", file=sys.stderr)
            asyncio.run(run_load(server.url, token, clients=4, seconds=1.0))
            print(f"1 client × {min(args.seconds, 5.0):g} s", file=sys.stderr)
            single = asyncio.run(run_load(server.url, token, clients=1, seconds=min(args.seconds, 5.0)))
            print(f"{args.clients} clients × {args.seconds:g} s", file=sys.stderr)
            load = asyncio.run(run_load(server.url, token, clients=args.clients, seconds=args.seconds, slow=args.slow))
            exit_status = server.stop()
        report = {"machine": started_on, "single": single, "load": load, "server_exit_status": exit_status}
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"http-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not args.no_write:
        write_results(report)
    return 0 if load["status_5xx"] == 0 and load["transport_errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
