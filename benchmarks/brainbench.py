"""BrainBench: memverbs's real hooks and capture, replayed in Claude Code, Codex and OpenClaw shapes, scored
by the reference's cross-harness memory benchmark. `python -m benchmarks.brainbench [-v]`.

For each fixture and harness: a fresh MEMVERBS_HOME seeded from the fixture's pages through memverbs's
page ops (plus a decoy source), `memverbs install <harness>`'s own hook commands, and one session as the
harness runs it — session start, then the per-prompt hook on every user turn, each a subprocess fed the
harness's real stdin payload (OpenClaw: our JS plugin loaded by node, fed the Gateway's hook events).
Write-back and continuity sessions then end as the harness ends them: the transcript written where it
keeps it, the session-end hook, and the detached capture worker waited for. A continuity pair is one
brain: the writer's session in one harness, its capture, then the reader's session in the next harness
(Claude Code → Codex → OpenClaw → Claude Code). Pages are seeded more than delta's in-flight window
before a session starts, as a user's brain was written before today's session.

What counts and how is brainbench_score.py's docstring (pointer grammar, per-turn injection, suites);
the harness shapes are brainbench_harnesses.py's. Nothing here reads a fixture's id or text to decide
anything: the held-out half is scored the same way.

Output: a table per harness with the targets, `benchmarks/results/brainbench-latest.json` (the
reference's result shape: receipt, cells, turn_rows, seed_failures; the texts under `_meta`), and, for an
unfiltered run, the `brainbench` section at the end of benchmarks/RESULTS.md. `-v` prints what each
turn injected, so you can read what the model gets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks import brainbench_brain as brain
from benchmarks import brainbench_harnesses as hx
from benchmarks import brainbench_report as report
from benchmarks import brainbench_result as result_doc
from benchmarks import brainbench_score as score
from benchmarks.brainbench_data import SUITES, Corpus, Fixture, Turn, default_root, load, select
from benchmarks.brainbench_result import Unit

SETTLE_S = 2.5  # past delta's in-flight window (2 s): seeded pages are history, not news, to a new session
RESULTS_DIR = Path(__file__).resolve().parent / "results"
LATEST = RESULTS_DIR / "brainbench-latest.json"


def next_harness(harness: str, rotation: list[str]) -> str:
    order = [h for h in hx.HARNESSES if h in rotation]
    return order[(order.index(harness) + 1) % len(order)]


def plan(fixtures: list[Fixture], corpus: Corpus, harnesses: list[str], rotation: list[str] | None = None) -> list[Unit]:
    """The brains to replay. A continuity pair is written in each harness of `rotation` (every harness that
    can run here) and read in the next one; with a harness filter, the pairs that harness writes or reads."""
    rotation = rotation or harnesses
    units = []
    pairs = {p.pair_id: p for p in corpus.pairs()}
    chosen_ids = {f.fixture_id for f in fixtures}
    for f in fixtures:
        if f.pair_id is None:
            units += [Unit(f.fixture_id, h, [f]) for h in harnesses]
    for pid, pair in sorted(pairs.items()):
        if pair.writer.fixture_id in chosen_ids and pair.reader.fixture_id in chosen_ids:
            for writer in rotation:
                reader = next_harness(writer, rotation)
                if writer in harnesses or reader in harnesses:
                    units.append(Unit(pid, writer, [pair.writer, pair.reader], reader))
    return units


class Run:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.installs: dict[tuple[str, str], hx.Install] = {}
        self.lock = threading.Lock()
        self.plugin = hx.plugin_copy(workdir)

    def install(self, harness: str, source: str) -> hx.Install:
        with self.lock:
            key = (harness, source)
            if key not in self.installs:
                self.installs[key] = hx.install(harness, self.workdir, source)
            return self.installs[key]

    def home(self, unit: Unit) -> Path:
        return self.workdir / "homes" / unit.harness / unit.key

    def seed(self, unit: Unit) -> None:
        """The unit's home: the fixture's seeded brain, seeded once and copied for each harness (the same
        bytes seeding again would write; the copy is made while no process has the brain open)."""
        seeded = self.workdir / "seeded" / unit.key
        if not seeded.exists():
            partial = seeded.with_name(seeded.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            brain.seed(partial, unit.fixtures, unit.active)  # a failure leaves no half-seeded brain to copy
            partial.rename(seeded)
        shutil.copytree(seeded, self.home(unit))
        unit.seeded_at = time.monotonic()

    def session(self, unit: Unit, harness: str, fixture: Fixture, role: str) -> hx.Session:
        installed = self.install(harness, unit.active).for_home(self.home(unit))
        user_home = self.workdir / "users" / harness / f"{unit.key}-{role}"
        cwd = self.workdir / "work" / unit.key
        cwd.mkdir(parents=True, exist_ok=True)
        user_home.mkdir(parents=True, exist_ok=True)
        started = time.time()
        if harness == "openclaw":
            return hx.OpenclawSession(installed, user_home, cwd, started, self.plugin)
        return hx.SESSIONS[harness](installed, user_home, cwd, started)

    def run_unit(self, unit: Unit) -> Unit:
        try:
            self._run_unit(unit)
        except Exception as exc:  # noqa: BLE001 - one broken unit is reported, the run goes on
            unit.failures.append(f"{type(exc).__name__}: {exc}")
        unit.hook_codes = brain.hook_codes(self.home(unit))
        return unit

    def _run_unit(self, unit: Unit) -> None:
        wait = unit.seeded_at + SETTLE_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        foreign = brain.ForeignIndex(unit.fixtures, unit.active)
        if unit.reader_harness is None:
            fixture = unit.fixtures[0]
            captures = "write-back" in fixture.suites
            self.replay(unit, unit.harness, fixture, "session", foreign, capture=captures)
            return
        writer, reader = unit.fixtures
        self.replay(unit, unit.harness, writer, "writer", foreign, capture=True)
        time.sleep(SETTLE_S)  # the reader's session comes later: what the writer's capture wrote is history by then
        texts, pointed = self.replay(unit, unit.reader_harness, reader, "reader", foreign, capture=False)
        outcome = score.continuity(reader.decisions or writer.decisions, texts, pointed)
        unit.continuity.append({"pair_id": unit.key, "writer": unit.harness, "reader": unit.reader_harness,
                                "writer_fixture": writer.fixture_id, "reader_fixture": reader.fixture_id, **outcome})

    def replay(self, unit: Unit, harness: str, fixture: Fixture, role: str, foreign: brain.ForeignIndex,
               capture: bool) -> tuple[list[str], set[str]]:
        """One session of `fixture` in `harness`; its turn rows go on the unit. Returns every text the
        session received, and every slug it was pointed at."""
        session = self.session(unit, harness, fixture, role)
        home = self.home(unit)
        try:
            start = session.start()
            texts, pointed = [start.text], set()
            given: dict[int, score.Delivery] = {}
            history: list[Turn] = []
            first = True
            for turn in fixture.turns:
                if turn.role == "user":
                    delivery = session.prompt(turn, history)
                    if first:
                        delivery.parts = {**start.parts, **delivery.parts}
                        delivery.problems = start.problems + delivery.problems
                        delivery.calls = start.calls + delivery.calls
                        first = False
                    given[turn.turn_id] = delivery
                    carried = "\n\n".join(delivery.carried.values())
                    inj = score.pointers(delivery.text, foreign.known)
                    pointed |= set(inj)
                    texts += [delivery.text, carried]
                    unit.rows.append(score.TurnRow(
                        fixture.fixture_id, turn.turn_id, harness, fixture.suites, delivery.text, dict(delivery.parts), inj,
                        foreign.leaks(delivery.text + "\n" + carried, inj + score.pointers(carried, foreign.known)),
                        fixture.gold.get(turn.turn_id), round(delivery.ms, 1), delivery.problems, carried, delivery.calls))
                history.append(turn)
            if capture:
                before = brain.last_fact_id(home)
                ended = session.end(fixture.turns, given, start)
                logged = brain.wait_for_capture(home, hx.MEMVERBS_NAME[harness], session.session_id)
                facts = [f for fid, f in brain.read_facts(home) if fid > before]
                mine = [f for f in facts if f.source == unit.active]
                provenance = f"capture:{hx.MEMVERBS_NAME[harness]} session {session.session_id}"
                said = [t.text for t in fixture.turns if t.role == "user"]
                result = score.write_back(fixture.gold_facts(), mine, provenance, texts, said)
                result.update(fixture_id=fixture.fixture_id, harness=harness, session_id=session.session_id,
                              end=ended, capture=logged, other_sources=len(facts) - len(mine),
                              stored_facts=[{"fact": f.fact, "entity": f.entity_slug, "kind": f.kind,
                                             "provenance": f.provenance, "active": f.active} for f in mine])
                if "write-back" in fixture.suites:
                    unit.writeback.append(result)
            return texts, pointed
        finally:
            session.close()


def run(corpus: Corpus, fixtures: list[Fixture], harnesses: list[str], rotation: list[str], jobs: int, keep: bool) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="brainbench-"))
    started = time.time()
    load_before = os.getloadavg()[0]
    try:
        runner = Run(workdir)
        units = plan(fixtures, corpus, harnesses, rotation)
        hx.log(f"[brainbench] {len(fixtures)} fixtures × {len(harnesses)} harnesses: {len(units)} brains, {jobs} at a time")
        for source, h in sorted({(u.active, h) for u in units for h in (u.harness, u.reader_harness) if h}):
            runner.install(h, source)
        seed_failures: list[dict] = []
        # Seeding (in this process) runs ahead of the replays (subprocesses), each unit handed to the pool as
        # soon as its brain is seeded: a unit waits out its settle while the next ones are seeded.
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            pending = []
            for unit in units:
                try:
                    runner.seed(unit)
                except Exception as exc:  # noqa: BLE001 - a fixture that cannot be seeded is reported, not scored
                    seed_failures.append({"fixture_id": unit.key, "error": f"{unit.harness}: {type(exc).__name__}: {exc}"})
                    unit.failures.append("seed failed")
                    continue
                pending.append(pool.submit(runner.run_unit, unit))
            for done, future in enumerate(pending, 1):
                future.result()
                if done % 25 == 0 or done == len(pending):
                    hx.log(f"[brainbench] {done}/{len(pending)} brains replayed ({time.time() - started:.0f} s)")
        machine = {"nproc": os.cpu_count(), "python": sys.version.split()[0],
                   "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
        installs = {f"{h}/{s}": i.how for (h, s), i in runner.installs.items()}
        return result_doc.build(corpus, units, harnesses, seed_failures, started, time.time() - started, machine,
                                installs, git_sha())
    finally:
        if keep:
            hx.log(f"[brainbench] kept the work folder: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def git_sha() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).resolve().parent).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def fixtures_hash(corpus: Corpus) -> str:
    h = hashlib.sha256()
    for path in sorted((corpus.root / "fixtures").glob("*.json")) + sorted((corpus.root / "gold").glob("*.json")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.brainbench", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, help="the corpus folder (fixtures/, gold/); default $MEMVERBS_BRAINBENCH or ../shared/data/brainbench")
    p.add_argument("--harness", action="append", help="claude-code (or claude), codex, openclaw; repeat or comma-separate (default: all)")
    p.add_argument("--suite", action="append", help=f"{', '.join(SUITES)}; repeat or comma-separate (default: all)")
    p.add_argument("--fixture", action="append", help="a fixture id (a continuity half brings its pair); repeat or comma-separate")
    p.add_argument("--jobs", type=int, default=3, help="brains replayed at once (default 3: most of a replay is waiting on hook processes)")
    p.add_argument("-v", "--verbose", action="store_true", help="print what every turn injected")
    p.add_argument("--out", type=Path, default=LATEST, help=f"the JSON result (default {LATEST.relative_to(Path.cwd()) if LATEST.is_relative_to(Path.cwd()) else LATEST})")
    p.add_argument("--no-results-md", action="store_true", help="do not write the RESULTS.md section (an unfiltered run writes it)")
    p.add_argument("--baseline", action="store_true", help="write RESULTS.md's baseline section (today's main) instead of the latest")
    p.add_argument("--keep", action="store_true", help="keep the work folder (homes, transcripts) for a look afterwards")
    return p.parse_args(argv)


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.data or default_root()
    if root is None or not root.is_dir():
        print("brainbench: no corpus found: pass --data DIR or set $MEMVERBS_BRAINBENCH (a folder with fixtures/ and gold/)",
              file=sys.stderr)
        return 2
    corpus = load(root)
    harnesses = _split(args.harness) or list(hx.HARNESSES)
    unknown = [h for h in harnesses if h not in hx.ALIASES]
    suites = _split(args.suite)
    if unknown or (suites and set(suites) - set(SUITES)):
        print(f"brainbench: unknown harness or suite: {unknown or sorted(set(suites or []) - set(SUITES))}", file=sys.stderr)
        return 2
    harnesses = [h for h in hx.HARNESSES if h in {hx.ALIASES[x] for x in harnesses}]
    rotation = list(hx.HARNESSES)
    if not hx.node_available():
        hx.log("[brainbench] node is not on PATH: OpenClaw's plugin cannot run, so OpenClaw is left out")
        rotation.remove("openclaw")
        harnesses = [h for h in harnesses if h in rotation]
    ids = _split(args.fixture)
    fixtures = select(corpus, set(suites) if suites else None, set(ids) if ids else None)
    if ids and not fixtures:
        print(f"brainbench: no fixture matches {ids}", file=sys.stderr)
        return 2
    result = run(corpus, fixtures, harnesses, rotation, args.jobs, args.keep)
    result["receipt"]["fixtures_hash"] = fixtures_hash(corpus)
    result["receipt"]["cmd_args"] = sys.argv[1:] if argv is None else list(argv)
    if args.verbose:
        print(report.verbose(result))
    print(report.tables(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    hx.log(f"[brainbench] wrote {args.out}")
    unfiltered = not (args.harness or args.suite or args.fixture)
    if unfiltered and not args.no_results_md:
        report.write_results_md(result, baseline=args.baseline)
        hx.log("[brainbench] wrote the brainbench section of benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
