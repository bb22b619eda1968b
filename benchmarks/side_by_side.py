"""memverbs and any other MCP server, side by side over stdio: the same corpus, the same calls, interleaved.

    python -m benchmarks.side_by_side --other "reference-server --stdio" [--other-init "reference-server init"]
                                      [--size 1k] [--other-env K=V ...]
    python -m benchmarks.side_by_side --checkout /tmp/after --other-checkout /tmp/before [--backend postgres]

Both servers get a fresh home and are grown with the same corpus through the
same tools over MCP stdio (put_page, add_link, remember: benchmarks/corpus.py),
so each reaches the state its own tools produce. Then the workload of
benchmarks/verbs.py runs interleaved call by call — call k on one server, then
on the other, alternating which goes first — so both see the same machine
load. Reported per verb: p50/p99 of each and the ratio other / memverbs (above
1: memverbs is faster). Checks that a call did real work are applied to both;
the other server's failures are counted and reported instead of stopping the
run (it may shape answers differently), memverbs's stop it.

`--other` is any command speaking MCP over stdio; it runs with MEMVERBS_HOME and
HOME pointed at its own fresh directory (add `--other-env` for its own settings).
`--other-checkout DIR` names another memverbs tree instead: `python -m memverbs
init`, then `serve`, with this interpreter and DIR as the working directory (the
package root then imports that tree); `--checkout DIR` does the same for the
memverbs side (default: the memverbs this interpreter imports, init in-process).

`--backend postgres` (the `pgserver` wheel, with pgvector) or `postgres-plain`
(the distribution's Postgres) starts a throwaway server the way the tests do
(tests/support/postgres.py, at its default settings) and gives each side an empty
database of its own through its home's config.toml (`brain.url`), which each
side's own init migrates. The default is a SQLite file in each home. On Postgres,
check a gap by running again with the sides swapped: a query plan can differ
between the two databases of one server (benchmarks/RESULTS.md, "One store, two
dialects").
Not part of CI; tests/test_benchmarks_smoke.py runs it with memverbs as the other.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks import corpus, processes
from benchmarks.stdio_client import StdioClient
from benchmarks.verbs import BenchError, Verb, percentiles, prepare_delta, stdio_call, workload


def _timed(client: StdioClient, verb: Verb, k: int) -> tuple[dict, float, bool]:
    if verb.tool is None:
        return {}, client.ping(), False
    return client.call(verb.tool, verb.args(k))


def interleaved(ours: StdioClient, other: StdioClient, mine: list[Verb], theirs: list[Verb]) -> dict:
    """Call k of each verb on one server then the other (alternating who goes first).

    The two lists are the same workload; only delta's `since` differs, each server's own mark."""
    results = {}
    for a_verb, b_verb in zip(mine, theirs, strict=True):
        samples: dict[str, list[float]] = {"memverbs": [], "other": []}
        other_failures = 0
        for k in range(a_verb.warmup + a_verb.measured):
            order = [("memverbs", ours, a_verb), ("other", other, b_verb)]
            if k % 2:
                order.reverse()
            for name, client, verb in order:
                body, ms, is_error = _timed(client, verb, k)
                try:
                    if is_error:
                        raise BenchError(f"{verb.name} call {k} failed: {str(body)[:300]}")
                    verb.check(body, k)
                except BenchError:
                    if name == "memverbs":
                        raise
                    other_failures += 1
                if k >= verb.warmup:
                    samples[name].append(ms)
        a, b = percentiles(samples["memverbs"]), percentiles(samples["other"])
        results[a_verb.name] = {
            "memverbs": a, "other": b, "other_check_failures": other_failures,
            "ratio_p50": round(b["p50_ms"] / a["p50_ms"], 2) if a["p50_ms"] else None,
            "ratio_p99": round(b["p99_ms"] / a["p99_ms"], 2) if a["p99_ms"] else None,
        }
    return results


def _env(home: Path, extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env.update(MEMVERBS_HOME=str(home), **extra)
    return env


def checkout_cmd() -> list[str]:
    """memverbs from a checkout: run with the checkout as the working directory, `python -m memverbs` imports that tree."""
    return [sys.executable, "-m", "memverbs"]


BACKENDS = {"sqlite": None, "postgres": "start_pgserver", "postgres-plain": "start_distro"}


@contextmanager
def brain_urls(backend: str) -> Iterator[tuple[str | None, str | None, str]]:
    """(memverbs's brain.url, the other's, what serves them): None for the SQLite file in each home."""
    if BACKENDS[backend] is None:
        yield None, None, "sqlite"
        return
    path = Path(__file__).resolve().parent.parent / "tests" / "support" / "postgres.py"
    spec = importlib.util.spec_from_file_location("memverbs_test_postgres", path)
    assert spec is not None and spec.loader is not None
    support = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(support)
    server = getattr(support, BACKENDS[backend])()
    if server is None:
        raise SystemExit(f"no {backend} server could be started here (tests/support/postgres.py)")
    try:
        print(f"  a throwaway Postgres ({server.kind}) in {server.data_dir}", file=sys.stderr)
        yield server.new_database(empty=True), server.new_database(empty=True), f"postgres ({server.kind})"
    finally:
        server.stop()


def _point_at(home: Path, url: str | None) -> None:
    if url is not None:  # a JSON string is a valid TOML basic string
        (home / "config.toml").write_text(f"[brain]\nurl = {json.dumps(url)}\n")


def run(other_cmd: list[str], size: corpus.Size, other_env: dict | None = None, *, other_init: list[str] | None = None,
        other_cwd: Path | None = None, checkout: Path | None = None, backend: str = "sqlite",
        settle_s: float = 2.5, scale: float = 1.0) -> dict:
    with tempfile.TemporaryDirectory(prefix="memverbs-sbs-") as tmp, brain_urls(backend) as (ours_url, other_url, served):
        ours_home, other_home = Path(tmp) / "memverbs", Path(tmp) / "other"
        ours_home.mkdir()
        other_home.mkdir()
        _point_at(ours_home, ours_url)
        _point_at(other_home, other_url)
        other_env = {"HOME": str(other_home), **(other_env or {})}
        ours_cmd = checkout_cmd() if checkout else processes.memverbs_cmd()
        ours_env = _env(ours_home, {"HOME": str(ours_home)} if checkout else {})
        if checkout:
            subprocess.run([*ours_cmd, "init"], env=ours_env, cwd=checkout, check=True, capture_output=True)
        else:
            corpus.init_home(ours_home)
        if other_init:
            subprocess.run(other_init, env=_env(other_home, other_env), cwd=other_cwd or other_home, check=True,
                           capture_output=True)
        with StdioClient([*ours_cmd, "serve", "--surface", "full"], env=ours_env, cwd=checkout) as ours, \
                StdioClient(other_cmd, env=_env(other_home, other_env), cwd=other_cwd or other_home) as other:
            report = {"memverbs_server": ours.server_info, "other_server": other.server_info, "other_command": other_cmd,
                      "memverbs_checkout": str(checkout) if checkout else None,
                      "other_checkout": str(other_cwd) if other_cwd else None, "backend": served,
                      "corpus": size.__dict__, "growth_s": {}}
            for name, client in (("memverbs", ours), ("other", other)):
                print(f"  growing the {size.name} corpus into {name} over MCP stdio", file=sys.stderr)
                started = time.monotonic()
                call = stdio_call(client)
                report.setdefault("growth_calls", {})[name] = corpus.grow(call, size)
                report["growth_s"][name] = round(time.monotonic() - started, 1)
                report.setdefault("delta_since", {})[name] = prepare_delta(call)
            time.sleep(settle_s)
            since = report["delta_since"]
            report["verbs"] = interleaved(ours, other, workload(since["memverbs"], scale, size.targets),
                                         workload(since["other"], scale, size.targets))
            report["load_1min"] = round(os.getloadavg()[0], 2)
        if ours_url and any((home / "brain.db").exists() for home in (ours_home, other_home)):
            raise BenchError("a side served a SQLite file, not its Postgres database: its brain.url was not read")
    return report


def table(report: dict) -> str:
    ours = f"`{report['memverbs_checkout']}`" if report.get("memverbs_checkout") else "memverbs"
    other = f"`{report['other_checkout']}`" if report.get("other_checkout") else f"`{' '.join(report['other_command'])}`"
    lines = [f"{ours} vs {other} ({report['other_server'].get('name', '?')}) on {report.get('backend', 'sqlite')}, "
             f"{report['corpus']['name']} corpus grown over MCP stdio in {report['growth_s']['memverbs']} s / "
             f"{report['growth_s']['other']} s; interleaved call by call, client-side ms.", "",
             "| verb | memverbs p50 | memverbs p99 | other p50 | other p99 | ratio p50 | ratio p99 | other's failed checks |",
             "|---|---|---|---|---|---|---|---|"]
    for verb, r in report["verbs"].items():
        a, b = r["memverbs"], r["other"]
        lines.append(f"| {verb} | {a['p50_ms']:.2f} | {a['p99_ms']:.2f} | {b['p50_ms']:.2f} | {b['p99_ms']:.2f} | "
                     f"{r['ratio_p50']}× | {r['ratio_p99']}× | {r['other_check_failures']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.side_by_side", description=__doc__.split("\n\n")[0])
    other = parser.add_mutually_exclusive_group(required=True)
    other.add_argument("--other", help="the other MCP server's stdio command line")
    other.add_argument("--other-checkout", type=Path, metavar="DIR", help="another memverbs checkout, run from DIR")
    parser.add_argument("--checkout", type=Path, metavar="DIR", help="run the memverbs side from this checkout too")
    parser.add_argument("--other-env", action="append", default=[], metavar="K=V")
    parser.add_argument("--other-init", help="a command run once in the other's fresh home first (e.g. its init)")
    parser.add_argument("--backend", default="sqlite", choices=sorted(BACKENDS), help="where both brains live")
    parser.add_argument("--size", default="1k", choices=sorted(corpus.SIZES))
    args = parser.parse_args(argv)
    extra = dict(item.split("=", 1) for item in args.other_env)
    if args.other_checkout:
        cmd = checkout_cmd()
        other_cmd, other_init = [*cmd, "serve", "--surface", "full"], [*cmd, "init"]
    else:
        other_cmd, other_init = shlex.split(args.other), shlex.split(args.other_init) if args.other_init else None
    report = run(other_cmd, corpus.SIZES[args.size], extra, other_init=other_init,
                 other_cwd=args.other_checkout and args.other_checkout.resolve(),
                 checkout=args.checkout and args.checkout.resolve(), backend=args.backend)
    out = Path(__file__).resolve().parent / "results" / f"side-by-side-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
