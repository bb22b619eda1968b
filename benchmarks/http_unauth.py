"""Unauthenticated requests against `memverbs serve --http`: what they cost the server's memory and its brain.

    python -m benchmarks.http_unauth                    # every route, 150 and 400 uploads of 4 MiB; writes RESULTS.md
    python -m benchmarks.http_unauth --routes /mcp,/register --uploads 20 --no-write

A real `memverbs serve --http` on 127.0.0.1 with OAuth on (one static token
exists, none is sent). Two parts:

* **Uploads.** For each route (`/mcp` and the OAuth routes a client without a
  token reaches: `/register`, `/token`, `/consent`, `/authorize`, `/revoke`) and
  each count, that many raw HTTP/1.1 POSTs at once (a thread each), each on its
  own connection with a 4 MiB body (the largest `/mcp` may declare) and no
  credential: the client sends the head and the whole body, then reads the
  answer. Measured: the server's resident memory (VmRSS from /proc, sampled
  every 50 ms during the burst: its peak) against its figure at rest before the
  first burst, a second after each burst, and the answers' statuses (a reset is
  counted as `reset`).
* **Registrations.** `--registrations` attempts at `/register`, each from an
  address of its own (X-Forwarded-For, trusted from loopback as from a proxy
  there), first with the largest metadata every field's bound allows, then
  with a 3.9 MB `client_name`: the statuses, how many clients the brain holds,
  and how much the brain file grew.

Bounded: a socket timeout per request and a deadline for the whole run; loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from benchmarks.http_load import RemoteServer, machine, make_token
from benchmarks.results_file import replace_section

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- unauth-routes:begin -->", "<!-- unauth-routes:end -->"
UPLOAD_BYTES = 4 * 1024 * 1024  # the /mcp body limit (http_limits.MAX_BODY_BYTES), declared in full
ROUTES = ("/mcp", "/register", "/token", "/consent", "/authorize", "/revoke")
SOCKET_TIMEOUT_S = 60.0
RUN_DEADLINE_S = 1800.0
CALLBACK = "http://127.0.0.1:9/callback"


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of `pid` in MB (10^6 bytes)."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024 / 1e6
    return round(fields["VmRSS"], 1), round(fields["VmHWM"], 1)


def upload(port: int, path: str, body: bytes) -> str:
    """One unauthenticated POST of `body`; its HTTP status, or what went wrong instead."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT_S) as s:
            s.sendall(head)
            try:
                s.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered and closed before the whole body went: read what it said
            answer = b""
            while b"\r\n" not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    return "closed without an answer"
                answer += chunk
    except ConnectionResetError:
        return "reset"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return type(exc).__name__
    return answer.split(b" ", 2)[1].decode("ascii", "replace")


class Sampler:
    """The server's VmRSS every 50 ms while a burst runs: its peak."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid)[0])
            time.sleep(0.05)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def burst(pid: int, port: int, path: str, count: int, body: bytes, deadline: float) -> dict:
    results: Counter = Counter()
    lock = threading.Lock()

    def one() -> None:
        outcome = upload(port, path, body)
        with lock:
            results[outcome] += 1

    threads = [threading.Thread(target=one, daemon=True) for _ in range(count)]
    started = time.monotonic()
    with Sampler(pid) as sampler:
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
    wall = time.monotonic() - started
    time.sleep(1.0)  # let the server finish with the last connections before reading its memory
    return {"route": path, "uploads": count, "outcomes": dict(results), "wall_s": round(wall, 2),
            "peak_mb": sampler.peak, "after_mb": rss_mb(pid)[0]}


def registrations(base: str, brain: Path, attempts: int) -> dict:
    import httpx  # noqa: PLC0415

    from memverbs.server.oauth import limits  # noqa: PLC0415

    def url(i: int) -> str:
        return f"{CALLBACK}/{i}/" + "p" * (limits.MAX_URL - 60)

    largest = {"client_name": "n" * limits.MAX_TEXT["client_name"], "token_endpoint_auth_method": "none",
               "redirect_uris": [url(i) for i in range(limits.MAX_LIST["redirect_uris"][0])],
               "software_id": "s" * limits.MAX_TEXT["software_id"]}
    size = len(json.dumps(largest).encode())
    if size > limits.REGISTRATION_BODY_BYTES:  # every field at its bound must still fit the body cap
        largest["redirect_uris"] = largest["redirect_uris"][: limits.REGISTRATION_BODY_BYTES * 10 // size - 1]
    huge = {"client_name": "n" * 3_900_000, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    before = brain.stat().st_size + (brain.with_name(brain.name + "-wal").stat().st_size
                                     if brain.with_name(brain.name + "-wal").exists() else 0)
    outcomes: dict[str, Counter] = {"largest allowed": Counter(), "3.9 MB name": Counter()}
    started = time.monotonic()
    with httpx.Client(timeout=60) as client:
        for i in range(attempts):
            for label, body in (("largest allowed", largest), ("3.9 MB name", huge)):
                r = client.post(f"{base}/register", json=body, headers={"X-Forwarded-For": f"10.9.{i // 256}.{i % 256}"})
                outcomes[label][str(r.status_code)] += 1
    wall = time.monotonic() - started
    import sqlite3  # noqa: PLC0415

    with sqlite3.connect(brain) as db:
        clients, largest_row = db.execute("SELECT count(*), coalesce(max(length(metadata)), 0) FROM oauth_clients").fetchone()
    after = brain.stat().st_size + (brain.with_name(brain.name + "-wal").stat().st_size
                                    if brain.with_name(brain.name + "-wal").exists() else 0)
    return {"attempts_per_kind": attempts, "body_bytes_largest": len(json.dumps(largest).encode()),
            "outcomes": {k: dict(v) for k, v in outcomes.items()}, "clients_stored": clients,
            "largest_metadata_bytes": largest_row, "brain_mb_before": round(before / 1e6, 2),
            "brain_mb_after": round(after / 1e6, 2), "wall_s": round(wall, 1)}


def run(counts: list[int], routes: list[str], attempts: int) -> dict:
    body = b"x" * UPLOAD_BYTES
    deadline = time.monotonic() + RUN_DEADLINE_S
    with tempfile.TemporaryDirectory(prefix="memverbs-http-unauth-") as tmp:
        home = Path(tmp) / "home"
        from benchmarks.corpus import init_home  # noqa: PLC0415

        init_home(home)
        make_token(home, "present-but-not-sent")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        with RemoteServer(home, env=env) as server:
            assert server.proc is not None
            pid, port = server.proc.pid, int(server.url.rsplit(":", 1)[1].split("/", 1)[0])
            time.sleep(1.0)
            at_rest = rss_mb(pid)[0]
            bursts = []
            for path in routes:
                for count in counts:
                    print(f"{count} × 4 MiB to {path}", file=sys.stderr)
                    bursts.append(burst(pid, port, path, count, body, deadline))
            regs = registrations(server.base, home / "brain.db", attempts) if attempts else None
            peak = rss_mb(pid)[1]
            server.stop()
    return {"machine": machine(), "upload_bytes": UPLOAD_BYTES, "rss_at_rest_mb": at_rest, "rss_peak_mb": peak,
            "bursts": bursts, "registrations": regs}


def write_results(report: dict) -> None:
    m, rest = report["machine"], report["rss_at_rest_mb"]

    def outcomes(part: dict) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(part.items()))

    rows = [f"| `{b['route']}` | {b['uploads']} | {b['peak_mb']} | +{round(b['peak_mb'] - rest, 1)} | {b['after_mb']} | "
            f"{b['wall_s']} | {outcomes(b['outcomes'])} |" for b in report["bursts"]]
    worst = max(b["peak_mb"] - rest for b in report["bursts"])
    lines = [
        BEGIN,
        "## Remote (HTTP): unauthenticated requests, every route (`python -m benchmarks.http_unauth`)",
        "",
        f"Measured {m['date']} on {m['nproc']} cores, Python {m['python']} (1-minute load average {m['load_average_1m']} at "
        "the start; memory figures do not depend on the load the way latencies do). A real `memverbs serve --http` on "
        "127.0.0.1 with OAuth on. For each route, that many POSTs at once (a thread each), each on its own connection with "
        f"a {report['upload_bytes'] // (1024 * 1024)} MiB body and no credential; each client sends its whole body, then "
        "reads. Memory is the server's resident set (VmRSS, MB): at rest "
        f"{rest} MB before the first burst; the peak is sampled every 50 ms during a burst; after is a second later. "
        "The bursts run one after another on one server, top to bottom, so a row's growth includes whatever the bursts "
        "above it left held (the allocator keeps freed memory): the worst case. Target: growth under 100 MB.",
        "",
        "| route | uploads at once | peak MB | growth MB | after MB | wall s | answers |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Largest growth over rest: **{round(worst, 1)} MB** (target < 100 MB: "
        f"{'met' if worst < 100 else 'missed'}); the process's high-water mark over the whole run "
        f"{report['rss_peak_mb']} MB. Before (the issue's measurement, `/register`, `/token` and `/consent` reading up to "
        "4 MiB per connection before any check): 150 connections took the server from 72 to 681 MB, 400 to 1.69 GB, and "
        "a declared 5 MiB body was held 30 s for a 408. Now an OAuth route refuses a body its head declares over the "
        "route's cap (8 KiB for forms, 16 KiB for registration JSON) with an immediate 413, and what is on its way is "
        "read and dropped in pieces; `/mcp` answers 401 from the head as before. Every connection is read 64 KiB at a "
        "time: with the event loop's default 256 KiB reads, 400 uploads to `/register` on a fresh server peaked at "
        "273 MB (+197 MB, the same machine and hour), the reads of the uploads in flight at once.",
    ]
    regs = report.get("registrations")
    if regs:
        lines += [
            "",
            f"Registrations: {regs['attempts_per_kind']} attempts of each kind, each from an address of its own, "
            f"one after another ({regs['wall_s']} s). The largest metadata every field's bound allows "
            f"({regs['body_bytes_largest']:,} bytes of JSON): {outcomes(regs['outcomes']['largest allowed'])}; a 3.9 MB "
            f"`client_name`: {outcomes(regs['outcomes']['3.9 MB name'])}. The brain holds {regs['clients_stored']} "
            f"clients afterwards, the largest stored metadata {regs['largest_metadata_bytes']:,} bytes; brain.db went "
            f"from {regs['brain_mb_before']} to {regs['brain_mb_after']} MB. Before (the issue's): 25 registrations of "
            "3.9 MB each grew brain.db from 0.4 to 106 MB in 7.6 s, with no limit on rate or count.",
        ]
    lines.append(END)
    replace_section(BEGIN, END, "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_unauth", description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", default="150,400", help="uploads at once per burst, comma-separated")
    parser.add_argument("--routes", default=",".join(ROUTES))
    parser.add_argument("--registrations", type=int, default=200, help="registration attempts of each kind (0: none)")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    report = run([int(n) for n in args.uploads.split(",")], args.routes.split(","), args.registrations)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"http-unauth-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not args.no_write:
        write_results(report)
    expected = {"/mcp": "401"}
    failures = sum(v for b in report["bursts"] for k, v in b["outcomes"].items() if k != expected.get(b["route"], "413"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
