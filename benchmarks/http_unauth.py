"""Unauthenticated uploads against `memverbs serve --http`: what they cost the server's memory.

    python -m benchmarks.http_unauth                    # 150 uploads of 4 MiB, in sequence then at once; writes RESULTS.md
    python -m benchmarks.http_unauth --uploads 20 --no-write

A real `memverbs serve --http` on 127.0.0.1 (one token exists, none is sent).
Each upload is a raw HTTP/1.1 POST to /mcp with a 4 MiB body (the largest a
request may declare) and no Authorization header, on its own connection: the
client sends the head and the whole body, then reads the answer. Measured: the
server's resident memory (VmRSS from /proc) at rest, after the uploads in
sequence, and after the same number at once (one thread each), with its peak
(VmHWM); the answers' statuses, and how many connections ended in a reset
instead of an answer. Bounded: a socket timeout per upload and a deadline for
the whole run; loopback only.
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
BEGIN, END = "<!-- http-unauth:begin -->", "<!-- http-unauth:end -->"
UPLOAD_BYTES = 4 * 1024 * 1024  # the request body limit (http_limits.MAX_BODY_BYTES): declared in full, not refused as 413
SOCKET_TIMEOUT_S = 30.0
RUN_DEADLINE_S = 600.0


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of `pid` in MB (10^6 bytes)."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024 / 1e6
    return round(fields["VmRSS"], 1), round(fields["VmHWM"], 1)


def upload(port: int, body: bytes) -> str:
    """One unauthenticated POST of `body`; its HTTP status, or what went wrong instead."""
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT_S) as s:
            s.sendall(head)
            s.sendall(body)
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


def settle(pid: int, seconds: float = 1.0) -> tuple[float, float]:
    time.sleep(seconds)  # let the server finish with the last connections before reading its memory
    return rss_mb(pid)


def run(uploads: int) -> dict:
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
            at_rest = settle(pid)
            started = time.monotonic()
            sequential = Counter(upload(port, body) for _ in range(uploads) if time.monotonic() < deadline)
            sequential_s = time.monotonic() - started
            after_sequential = settle(pid)

            results: Counter = Counter()
            lock = threading.Lock()

            def one() -> None:
                outcome = upload(port, body)
                with lock:
                    results[outcome] += 1

            threads = [threading.Thread(target=one, daemon=True) for _ in range(uploads)]
            started = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
            concurrent_s = time.monotonic() - started
            after_concurrent = settle(pid)
            server.stop()
    return {
        "machine": machine(),
        "uploads": uploads,
        "upload_bytes": UPLOAD_BYTES,
        "rss_mb": {"at_rest": at_rest[0], "after_sequential": after_sequential[0], "after_concurrent": after_concurrent[0],
                   "peak": after_concurrent[1]},
        "sequential": {"outcomes": dict(sequential), "wall_s": round(sequential_s, 2)},
        "concurrent": {"outcomes": dict(results), "wall_s": round(concurrent_s, 2)},
    }


def write_results(report: dict, before: dict | None) -> None:
    m, rss = report["machine"], report["rss_mb"]

    def outcomes(part: dict) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(part["outcomes"].items()))

    rows = [f"| after (token checked from the head) | {rss['at_rest']} | {rss['after_sequential']} | "
            f"{rss['after_concurrent']} | {rss['peak']} | {outcomes(report['sequential'])} | {outcomes(report['concurrent'])} |"]
    if before is not None:
        b = before["rss_mb"]
        rows.insert(0, f"| before (body buffered, then the token checked) | {b['at_rest']} | {b['after_sequential']} | "
                       f"{b['after_concurrent']} | {b['peak']} | {outcomes(before['sequential'])} | "
                       f"{outcomes(before['concurrent'])} |")
    section = "\n".join([
        BEGIN,
        "## Remote (HTTP): unauthenticated uploads (`python -m benchmarks.http_unauth`)",
        "",
        f"Measured {m['date']} on {m['nproc']} cores, Python {m['python']} (1-minute load average {m['load_average_1m']} at "
        f"the start). A real `memverbs serve --http` on 127.0.0.1; {report['uploads']} POSTs to /mcp, each on its own "
        f"connection with a {report['upload_bytes'] // (1024 * 1024)} MiB body (the largest a request may declare) and no "
        "token, first one after another, then all at once (a thread each). Each client sends its whole body, then reads. "
        "Memory is the server process's resident set (VmRSS, MB) a second after each part; the peak is its high-water mark "
        "(VmHWM). Outcomes are the HTTP statuses the clients read (a reset would be counted as `reset`).",
        "",
        "| server | at rest MB | after sequential MB | after concurrent MB | peak MB | sequential outcomes | concurrent outcomes |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Before, the server read each body into memory (up to 4 MiB, then joined: twice that at the end) and only then "
        "looked at the Authorization header. Now the token is checked from the request's head: a request without a valid "
        "one is answered 401 at once, and the body on its way is read in 64 KiB pieces and dropped (within the same bounds "
        "as a refused oversize body) so the client reads the 401 rather than a reset. Nothing of it is kept. What the "
        "concurrent part still adds is per connection, not per body: the event loop reads a socket 256 KiB at a time and "
        "uvicorn holds up to 64 KiB of body before it pauses reading, for each of the uploads in flight at once; the "
        "sequential part adds nothing. The machine was shared (its load average is in the JSON reports under "
        "benchmarks/results/), so the concurrent figures move between runs; the issue that asked for this measured "
        "71 → 679 MB before.",
        END,
    ])
    replace_section(BEGIN, END, section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_unauth", description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=150)
    parser.add_argument("--before", type=Path, help="a JSON report of an earlier run (the code before), shown beside this one")
    parser.add_argument("--no-write", action="store_true", help="print the JSON; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    report = run(args.uploads)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"http-unauth-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not args.no_write:
        write_results(report, json.loads(args.before.read_text()) if args.before else None)
    failures = sum(v for part in ("sequential", "concurrent") for k, v in report[part]["outcomes"].items() if k != "401")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
