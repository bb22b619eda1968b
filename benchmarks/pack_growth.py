"""How the pack's cost grows with the brain: `python -m benchmarks.pack_growth`.

The target (BENCHMARKS.md, the gate's growth rule): the pack's p99 at 40× the pages within ×2 of the
small brain's. Two brains grown through memverbs's own tools (benchmarks/corpus.py: 1k and 40k pages,
cached), each a private working copy, measured in one process, round by round in turn (1k, 40k, 1k, …)
so a machine whose speed drifts moves both alike. Two packs, at the op layer:

* **wire** — `context_pack` as an MCP client calls it: 8 named target people (the gate workload's
  arguments), through the full-surface dispatcher with the usage log on;
* **session start** — what a local session-start hook reads out (server/verbs/readout.py `read_out`,
  the `START` moment, through the trusted local dispatcher as the hook's runner calls it): the standing
  entities chosen in the verb (the user's, then what the brain learned about most recently), the
  cursor's first wake included.

Writes the `pack-growth` section of RESULTS.md with `--write`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpus
from benchmarks.results_file import replace_section
from benchmarks.verbs import percentiles

BEGIN, END = "<!-- pack-growth:begin -->", "<!-- pack-growth:end -->"
SMALL, LARGE = "1k", "40k"
TARGET = 2.0


class _Session:
    """A session's state as a hook keeps it, in memory (hooks/state.SessionState's surface for readout)."""

    def __init__(self) -> None:
        self.entities: list[str] = []
        self.pending: list[str] = []
        self.cursor_set = False
        self._given: set[str] = set()

    def given(self, key: str) -> bool:
        return key in self._given

    def unseen(self, items: list[dict], key) -> list[dict]:
        fresh = [i for i in items if key(i) not in self._given]
        self._given.update(key(i) for i in items)
        return fresh

    def bank(self, slugs: list[str]) -> None:
        self.entities = list(dict.fromkeys([*slugs, *self.entities]))[:32]


def _brain(name: str, tmp: Path) -> dict:
    from memverbs.server.context import Caller  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.verbs.readout import LocalSide  # noqa: PLC0415

    size = corpus.SIZES[name]
    runtime = Runtime(Home(corpus.working_copy(size, tmp / name)))
    return {"size": size, "runtime": runtime, "wire": runtime.mcp_dispatcher("full", Caller.mcp("default")),
            "side": LocalSide(runtime.local_dispatcher())}


def _wire(brain: dict, k: int) -> float:
    from benchmarks.verbs import _FORMS  # noqa: PLC0415

    targets = brain["size"].targets
    entities = ",".join(_FORMS[(k + j) % 3]((k * 8 + j) % targets) for j in range(8))
    started = time.perf_counter()
    outcome = brain["wire"].call("context_pack", {"entities": entities, "session_id": f"bench-{k}-{time.time_ns()}"})
    wall = (time.perf_counter() - started) * 1000
    if outcome.is_error or len(outcome.body["cards"]) != 8:
        raise RuntimeError(f"context_pack {k}: {str(outcome.body)[:300]}")
    return wall


def _start(brain: dict, k: int) -> float:
    from memverbs.server.verbs import readout  # noqa: PLC0415

    ask = readout.Ask(readout.START, f"bench-start-{k}-{time.time_ns()}", user="people/me")
    started = time.perf_counter()
    out = readout.read_out(brain["side"], ask, _Session())
    wall = (time.perf_counter() - started) * 1000
    if not out.body.get("cards"):
        raise RuntimeError(f"session start {k} packed no cards")
    return wall


def measure(rounds: int, warmup: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="memverbs-pack-growth-") as tmp:
        brains = {name: _brain(name, Path(tmp)) for name in (SMALL, LARGE)}
        samples: dict = {kind: {name: [] for name in brains} for kind in ("wire", "start")}
        try:
            for k in range(warmup + rounds):
                for name, brain in brains.items():
                    for kind, run in (("wire", _wire), ("start", _start)):
                        wall = run(brain, k)
                        if k >= warmup:
                            samples[kind][name].append(wall)
        finally:
            for brain in brains.values():
                brain["runtime"].close()
    out: dict = {"load_1min": round(os.getloadavg()[0], 2), "rounds": rounds}
    for kind, by_size in samples.items():
        small, large = percentiles(by_size[SMALL]), percentiles(by_size[LARGE])
        out[kind] = {SMALL: small, LARGE: large, "ratio_p99": round(large["p99_ms"] / small["p99_ms"], 2),
                     "ratio_p50": round(large["p50_ms"] / small["p50_ms"], 2)}
    return out


def section(result: dict) -> str:
    rows = [BEGIN, "## The pack's growth: 1k against 40k pages (`python -m benchmarks.pack_growth`)", "",
            f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, 1-minute load {result['load_1min']}, "
            f"{result['rounds']} rounds each, sizes in turn. Op layer, ms. Target: p99 at 40× the pages ≤ {TARGET}× the small brain's.",
            "", "| pack | 1k p50 / p99 | 40k p50 / p99 | ratio p50 / p99 | target |", "|---|---|---|---|---|"]
    for kind, label in (("wire", "context_pack, 8 named entities (MCP caller)"),
                        ("start", "session start (`read_out`, standing chosen in the verb)")):
        r = result[kind]
        met = "met" if r["ratio_p99"] <= TARGET else "**missed**"
        rows.append(f"| {label} | {r[SMALL]['p50_ms']:.2f} / {r[SMALL]['p99_ms']:.2f} | {r[LARGE]['p50_ms']:.2f} / "
                    f"{r[LARGE]['p99_ms']:.2f} | {r['ratio_p50']}× / {r['ratio_p99']}× | ≤ {TARGET}×: {met} |")
    rows.append(END)
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pack_growth", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="write the pack-growth section of RESULTS.md")
    args = parser.parse_args(argv)
    result = measure(args.rounds, args.warmup)
    print(json.dumps(result, indent=1))
    text = section(result)
    print(text, file=sys.stderr)
    if args.write:
        replace_section(BEGIN, END, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
