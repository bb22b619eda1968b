"""BrainBench's result document: the units a run replayed, scored into the reference's result shape
(`receipt`, `cells` per harness and suite, `turn_rows`, `seed_failures`; result.schema.json), with what a
reader needs beside the scores under `_meta`: each harness's headline figures, every turn's text and hook
calls, each write-back and continuity outcome, the hooks' logged decisions."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from benchmarks import brainbench_score as score
from benchmarks.brainbench_data import Corpus, Fixture
from benchmarks.brainbench_harnesses import MEMVERBS_NAME
from benchmarks.brainbench_report import GLOSSARY, HEADLINE, TARGETS


@dataclass
class Unit:
    """One brain and the sessions run on it: a fixture in one harness, or a continuity pair."""

    key: str
    harness: str
    fixtures: list[Fixture]
    reader_harness: str | None = None
    seeded_at: float = 0.0
    rows: list[score.TurnRow] = field(default_factory=list)
    writeback: list[dict] = field(default_factory=list)
    continuity: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    hook_codes: dict[tuple[str, str, str], int] = field(default_factory=dict)  # from the home's hooks log

    @property
    def active(self) -> str:
        return self.fixtures[0].active_source


def build(corpus: Corpus, units: list[Unit], harnesses: list[str], seed_failures: list[dict], started: float,
          seconds: float, machine: dict, installs: dict, sha: str) -> dict:
    rows = [r for u in units for r in u.rows]
    writeback = [w for u in units for w in u.writeback]
    continuity = [c for u in units for c in u.continuity]
    cells: list[dict] = []
    summary: dict[str, dict] = {}
    for h in harnesses:
        mine = [r for r in rows if r.harness == h]
        by_suite = {
            "know-to-ask": lambda m=mine: {**score.know_to_ask(_in(m, "know-to-ask")), **score.per_turn(_in(m, "know-to-ask"))},
            "push": lambda m=mine: {**score.push(_in(m, "push")), **score.per_turn(_in(m, "push"))},
            "write-back": lambda h=h: score.write_back_cell([w for w in writeback if w["harness"] == h]),
            "continuity": lambda h=h: score.continuity_cell([c for c in continuity if c["reader"] == h]),
        }
        summary[h] = {}
        for suite, compute in by_suite.items():
            fixtures = sorted({f.fixture_id for u in units for f in u.fixtures if suite in f.suites and _ran(u, h)})
            if not fixtures:
                continue
            metrics = compute()
            gold_total, gold_failed = metrics.pop("gold_total"), metrics.pop("gold_failed")
            cells.append({"suite": suite, "harness": h, "seam": "production", "gold_total": gold_total,
                          "gold_failed": gold_failed, "metrics": {k: _round(v) for k, v in metrics.items() if isinstance(v, int | float)},
                          "fixtures": fixtures})
            summary[h].update({k: v for k, v in metrics.items() if k in HEADLINE or k in GLOSSARY})
        overall = score.per_turn(mine)
        summary[h].update(injected_tokens_per_turn=overall["injected_tokens_per_turn"],
                          carried_tokens_per_turn=overall["carried_tokens_per_turn"],
                          cross_source_injections=overall["cross_source_injections"], turns=overall["turns"],
                          latency_ms_p50=overall["latency_ms_p50"], latency_ms_p95=overall["latency_ms_p95"],
                          hook_problems=overall["hook_problems"])
    codes: dict[str, dict[str, int]] = {}
    names = {hx_name: h for h, hx_name in MEMVERBS_NAME.items()}
    for u in units:
        for (name, moment, code), n in u.hook_codes.items():
            key = f"{moment}:{code}"
            per = codes.setdefault(names.get(name, name), {})
            per[key] = per.get(key, 0) + n
    for h in summary:
        summary[h]["hook_deadlines"] = sum(n for k, n in codes.get(h, {}).items() if k.endswith(":deadline"))
    turn_rows = [
        {"fixture_id": r.fixture_id, "turn_id": r.turn_id, "harness": r.harness, "suite": suite,
         "injected_slugs": r.injected, "injected_tokens": r.tokens, "gold": _gold(r), "cross_source_slugs": r.cross_source,
         "latency_ms": r.latency_ms}
        for r in rows for suite in r.suites
    ]
    prompts = {(f.fixture_id, t.turn_id): t.text for u in units for f in u.fixtures for t in f.turns}
    return {
        "receipt": {"result_schema_version": 1, "fixtures_hash": "", "harness_sha": sha,
                    "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "cmd_args": [], "seed": 0,
                    "include_holdout": False, "llm": False},
        "cells": cells,
        "turn_rows": turn_rows,
        "seed_failures": seed_failures,
        "_meta": {
            "metric_glossary": GLOSSARY, "targets": {k: list(v) for k, v in TARGETS.items()},
            "summary": {h: {k: _round(v) for k, v in s.items()} for h, s in summary.items()},
            "corpus": str(corpus.root), "harnesses": harnesses, "seconds": round(seconds, 1), "machine": machine,
            "installs": installs,
            "hook_codes": codes,  # harness → "moment:code" → runs, from every home's hooks log
            "failures": [{"unit": f"{u.harness}/{u.key}", "error": e} for u in units for e in u.failures],
            "deliveries": [{"fixture_id": r.fixture_id, "turn_id": r.turn_id, "harness": r.harness,
                            "prompt": prompts.get((r.fixture_id, r.turn_id), ""), "text": r.text, "parts": r.parts,
                            "carried": r.carried, "calls": r.calls, "problems": r.problems} for r in rows],
            "writeback_rows": writeback,
            "continuity_rows": continuity,
        },
    }


def _in(rows: list[score.TurnRow], suite: str) -> list[score.TurnRow]:
    return [r for r in rows if suite in r.suites]


def _ran(unit: Unit, harness: str) -> bool:
    return unit.harness == harness or unit.reader_harness == harness


def _gold(r: score.TurnRow) -> dict | None:
    if r.gold is None:
        return None
    return {"should_retrieve": r.gold.should_retrieve, "gold_slugs": sorted(r.gold.gold_slugs),
            "acceptable_slugs": sorted(r.gold.acceptable_slugs)}


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


