"""What an authenticated call costs: an OAuth access token against a static token, on a real `serve --http`.

    python -m benchmarks.http_auth                      # 400 calls per kind, then the slow-client load; writes RESULTS.md
    python -m benchmarks.http_auth --calls 100 --no-load --no-write

Sequential calls from one client on one keep-alive connection, the two kinds
interleaved call by call (so both see the same machine), for two requests: a
`tools/list` (the gate and the MCP layer, no verb) and a `tools/call whoami`.
The gate reads the credential's row on every request for both kinds; an OAuth
access token also joins its client's row and checks expiry and audience.
Then the hostile-client load of `benchmarks.http_load` (`--clients`, `--slow`)
runs with the OAuth token, to show the connections still held with OAuth on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.http_load import HEADERS, RemoteServer, call_body, machine, make_token, run_load, seed
from benchmarks.results_file import replace_section

BEGIN, END = "<!-- http-auth:begin -->", "<!-- http-auth:end -->"


def make_oauth_token(home: Path, resource: str) -> str:
    """An OAuth access token straight into the brain, as the consent page and /token would issue it."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.oauth import credentials  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    brain = Runtime(Home(home)).open_brain()
    try:
        ref = brain.oauth_add_client(client_id="bench-client", name="bench", metadata="{}", secret_hash=None,
                                     lane=credentials.lane_for("bench-client"), now=now_ms())
        token = credentials.mint("access")
        brain.oauth_exchange(None, [{"client_ref": ref, "kind": "access", "token_hash": credentials.digest(token),
                                     "family": None, "scopes": "read,write", "surface": "full", "source_id": "default",
                                     "resource": resource, "expires_at": now_ms() + 3_600_000}], now_ms())
    finally:
        brain.close()
    return token


def pct(ordered: list[float], q: float) -> float:
    return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 2)


def interleaved(url: str, tokens: dict[str, str], calls: int) -> dict:
    import httpx  # noqa: PLC0415

    bodies = {"tools/list": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
              "whoami": call_body(1, "whoami", {})}
    times: dict[str, dict[str, list[float]]] = {b: {k: [] for k in tokens} for b in bodies}
    clients = {k: httpx.Client(headers={**HEADERS, "Authorization": f"Bearer {t}"}, timeout=30) for k, t in tokens.items()}
    try:
        for i in range(calls + 20):  # the first 20 warm both paths and are not counted
            for what, body in bodies.items():
                for kind, http in clients.items():
                    t0 = time.perf_counter()
                    response = http.post(url, json=body)
                    elapsed = (time.perf_counter() - t0) * 1000
                    assert response.status_code == 200, response.text
                    if i >= 20:
                        times[what][kind].append(elapsed)
    finally:
        for http in clients.values():
            http.close()
    return {what: {kind: {"n": len(v), "p50_ms": pct(sorted(v), 0.5), "p95_ms": pct(sorted(v), 0.95),
                          "mean_ms": round(sum(v) / len(v), 2)} for kind, v in by_kind.items()}
            for what, by_kind in times.items()}


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        BEGIN,
        "## Authenticated calls: OAuth access token vs static token (`python -m benchmarks.http_auth`)",
        "",
        f"Measured {m['date']} on {m['nproc']} cores, Python {m['python']} (1-minute load average {m['load_average_1m']} "
        f"at the start): one client, one keep-alive connection, {report['calls']} calls of each kind interleaved call by "
        "call against a real `serve --http` on 127.0.0.1 (OAuth on). Client-side milliseconds.",
        "",
        "| request | token | p50 ms | p95 ms | mean ms |",
        "|---|---|---|---|---|",
    ]
    for what, by_kind in report["calls_by_kind"].items():
        for kind, x in by_kind.items():
            lines.append(f"| {what} | {kind} | {x['p50_ms']} | {x['p95_ms']} | {x['mean_ms']} |")
    loads = report.get("load")
    if loads:
        first = next(iter(loads.values()))
        lines += [
            "",
            f"The slow-client load of `benchmarks.http_load`, on the same server with each kind of token in turn: "
            f"{first['clients']} clients for {first['seconds']:g} s beside {first['slow_connections']} slow-loris "
            "connections trickling a request head, `/health` probed every 0.5 s.",
            "",
            "| token | requests | requests/s | p50 ms | p95 ms | 5xx | transport errors | slow dropped at the head deadline "
            "| connects refused | /health ok (failed) |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(f"| {kind} | {x['requests']:,} | {x['requests_per_s']:,} | {x['p50_ms']} | {x['p95_ms']} | {x['status_5xx']} | "
              f"{x['transport_errors']} | {x['slow_dropped_by_server']:,} | {x['slow_refused']:,} | "
              f"{x['health_ok']:,} ({x['health_failed']:,}) |" for kind, x in loads.items()),
        ]
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_auth", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--slow", type=int, default=800)
    parser.add_argument("--no-load", action="store_true", help="only the per-call comparison")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    report: dict = {"machine": machine(), "calls": args.calls}
    with tempfile.TemporaryDirectory(prefix="memverbs-http-auth-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        seed(home)
        static = make_token(home, "bench-static")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        with RemoteServer(home, env=env) as server:
            oauth = make_oauth_token(home, server.url)
            print(f"{args.calls} interleaved calls per kind", file=sys.stderr)
            report["calls_by_kind"] = interleaved(server.url, {"static": static, "oauth": oauth}, args.calls)
            if not args.no_load:
                # the same load with each kind of token, one after the other on the same server
                report["load"] = {}
                for kind, token in (("static", static), ("oauth", oauth)):
                    print(f"{args.clients} clients × {args.seconds:g} s beside {args.slow} slow connections ({kind})",
                          file=sys.stderr)
                    report["load"][kind] = asyncio.run(run_load(server.url, token, clients=args.clients,
                                                                seconds=args.seconds, slow=args.slow))
            server.stop()
    print(json.dumps(report, indent=2))
    if not args.no_write:
        replace_section(BEGIN, END, markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
