"""BrainBench's figures: the JSON result, the tables printed per harness, the per-turn reading (`-v`) and
the RESULTS.md section."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from benchmarks import brainbench_score as score
from benchmarks.brainbench_harnesses import MEMVERBS_NAME
from benchmarks.results_file import replace_section

if TYPE_CHECKING:
    from benchmarks.brainbench import Unit
    from benchmarks.brainbench_data import Corpus

# The targets, every harness: (direction, bound). n/a (nothing to measure) counts as missed.
TARGETS: dict[str, tuple[str, float]] = {
    "know_to_ask_failure_rate": ("≤", 0.05),
    "false_fire_rate": ("≤", 0.05),
    "push_precision": ("≥", 0.95),
    "push_recall": ("≥", 0.90),
    "continuity": ("≥", 1.0),
    "cross_source_injections": ("≤", 0),
    "injected_tokens_per_turn": ("≤", 80),
    "fidelity": ("≥", 0.70),
    "provenance": ("≥", 0.95),
}
GLOSSARY = {
    "know_to_ask_failure_rate": "turns whose gold says should_retrieve that got no gold or acceptable slug / such turns",
    "false_fire_rate": "quiet turns (should_retrieve false) that injected anything / quiet turns",
    "false_fire_pointer_rate": "quiet turns that named any pointer / quiet turns",
    "push_precision": "Σ|injected ∩ (gold + acceptable)| / Σ|injected| over turns with gold",
    "push_recall": "Σ|injected ∩ gold| / Σ|gold| over turns with gold",
    "continuity": "decisions of the writer's session found (all keywords on one line) in what the reader's session received",
    "continuity_linked": "… and the reader's session was pointed at one of the decision's expected slugs",
    "cross_source_injections": "pointers, canaries or summaries from another source, summed over turns",
    "injected_tokens_per_turn": "⌈characters / 4⌉ of what memverbs added to a user turn's request, mean over every replayed user turn",
    "fidelity": "gold facts matched by a stored fact (entity slug + every keyword; one stored fact per gold fact) / gold facts",
    "provenance": "stored facts whose provenance is exactly `capture:<harness> session <id>` / stored facts",
    "writeback_precision": "stored facts that matched a gold fact / stored (active) facts",
}
HEADLINE = ("know_to_ask_failure_rate", "false_fire_rate", "push_precision", "push_recall", "continuity",
            "cross_source_injections", "injected_tokens_per_turn", "fidelity", "provenance")
BEGIN, END = "<!-- brainbench:begin -->", "<!-- brainbench:end -->"
BASE_BEGIN, BASE_END = "<!-- brainbench-baseline:begin -->", "<!-- brainbench-baseline:end -->"


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


def met(metric: str, value: float | None) -> bool:
    if value is None:
        return False
    way, bound = TARGETS[metric]
    return value <= bound if way == "≤" else value >= bound


def fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if metric in ("cross_source_injections",):
        return f"{int(value)}"
    if metric == "injected_tokens_per_turn":
        return f"{value:.1f}"
    return f"{value:.2f}"


def headline_table(result: dict) -> list[str]:
    summary = result["_meta"]["summary"]
    harnesses = list(summary)
    lines = ["| metric | target | " + " | ".join(harnesses) + " |", "|---|---|" + "---|" * len(harnesses)]
    for metric in HEADLINE:
        way, bound = TARGETS[metric]
        cells = []
        for h in harnesses:
            value = summary[h].get(metric)
            cells.append(f"{fmt(metric, value)} {'✓' if met(metric, value) else '✗ missed'}")
        lines.append(f"| {metric} | {way} {bound:g} | " + " | ".join(cells) + " |")
    return lines


def counts_table(result: dict, walls: bool = True) -> list[str]:
    """Each cell's counts; `walls`: also the hooks' wall times (printed, never in RESULTS.md: a shared
    machine's walls are not figures — benchmarks/hook_timing.py measures the hooks)."""
    lines = ["| harness | suite | gold | failed | detail |", "|---|---|---|---|---|"]
    for cell in result["cells"]:
        m = cell["metrics"]
        detail = ", ".join(f"{k} {v:g}" for k, v in m.items() if k not in HEADLINE and (walls or not k.startswith("latency")))
        lines.append(f"| {cell['harness']} | {cell['suite']} | {cell['gold_total']} | {cell['gold_failed']} | {detail} |")
    return lines


def tables(result: dict) -> str:
    meta = result["_meta"]
    out = [f"BrainBench ({len({c for cell in result['cells'] for c in cell['fixtures']})} fixtures, "
           f"{meta['seconds']} s, load {meta['machine']['load_1min']})", "", *headline_table(result), "",
           *counts_table(result)]
    late = {h: s["hook_deadlines"] for h, s in meta["summary"].items() if s.get("hook_deadlines")}
    if late:
        out += ["", f"Hook runs that hit their deadline and printed nothing (a loaded machine?): {late}"]
    if result["seed_failures"] or meta["failures"]:
        out += ["", "Failures:"] + [f"  {f['fixture_id']}: {f['error']}" for f in result["seed_failures"]]
        out += [f"  {f['unit']}: {f['error']}" for f in meta["failures"]]
    return "\n".join(out)


def verbose(result: dict) -> str:
    """Every turn: the prompt, the gold, what was injected (pointers and text), and each write-back and
    continuity outcome — for reading what the model gets."""
    meta = result["_meta"]
    gold = {(r["fixture_id"], r["turn_id"], r["harness"]): r for r in result["turn_rows"]}
    suites: dict[str, list[str]] = {}
    for r in result["turn_rows"]:
        listed = suites.setdefault(r["fixture_id"], [])
        if r["suite"] not in listed:
            listed.append(r["suite"])
    out: list[str] = []
    last = None
    for d in sorted(meta["deliveries"], key=lambda d: (d["fixture_id"], d["harness"], d["turn_id"])):
        key = (d["fixture_id"], d["harness"])
        if key != last:
            out += ["", f"══ {d['fixture_id']} · {d['harness']} ({', '.join(suites.get(d['fixture_id'], []))}) ══"]
            last = key
        row = gold[(d["fixture_id"], d["turn_id"], d["harness"])]
        g = row["gold"]
        want = "no gold" if g is None else ("retrieve " + ", ".join(g["gold_slugs"]) + (
            f" (ok: {', '.join(g['acceptable_slugs'])})" if g["acceptable_slugs"] else "") if g["should_retrieve"] else "quiet")
        verdict = ""
        if g is not None:
            hit = set(row["injected_slugs"]) & set(g["gold_slugs"]) | set(row["injected_slugs"]) & set(g["acceptable_slugs"])
            verdict = (" ✓" if hit else " ✗ know-to-ask failure") if g["should_retrieve"] else (" ✗ false fire" if d["text"].strip() else " ✓")
        out.append(f"turn {d['turn_id']}: {d['prompt']}")
        out.append(f"  gold: {want} · injected {row['injected_tokens']} tokens, pointers {row['injected_slugs'] or '—'}{verdict}"
                   + (f" · CROSS-SOURCE {row['cross_source_slugs']}" if row["cross_source_slugs"] else ""))
        for call in d.get("calls", []):
            out.append(f"  ⇢ {call['moment']} hook sent {_short(call['payload'])}")
        for name, text in d["parts"].items():
            if text:
                out.append(f"  ┌ {name}")
                out += [f"  │ {line}" for line in text.splitlines()]
        if d.get("carried"):
            out.append(f"  ┄ carried again, not counted: the cached pack ({score.tokens(d['carried'])} tokens)")
        for problem in d["problems"]:
            out.append(f"  ! {problem}")
    for w in meta["writeback_rows"]:
        out += ["", f"══ write-back {w['fixture_id']} · {w['harness']} (capture {w['capture'].get('code')}, "
                    f"{w['survived']}/{w['gold_facts']} gold facts survive, {w['stored']} stored) ══"]
        for gist, fact in w["matches"].items():
            out.append(f"  ✓ {gist}  ←  {fact}")
        for f in w["stored_facts"]:
            mark = "=" if f["provenance"].startswith("capture:") else "?"
            out.append(f"  {mark} [{f['entity']}] {f['kind']}: {f['fact']}  ({f['provenance']})")
    for c in meta["continuity_rows"]:
        out += ["", f"══ continuity {c['pair_id']}: {c['writer']} → {c['reader']}: {c['reached']}/{c['decisions']} decisions "
                    f"reached, {c['linked']} linked ══"]
    return "\n".join(out)


def _short(payload: object, limit: int = 200) -> str:
    """A hook payload on one line: paths as `…`, ids and the prompt cut short (the turn's line shows it)."""
    if isinstance(payload, dict):
        payload = {k: "…" if k in ("transcript_path", "cwd") else v[:8] + "…" if k == "session_id" and isinstance(v, str)
                   else v[:40] + "…" if isinstance(v, str) and len(v) > 40 else v for k, v in payload.items()}
    text = json.dumps(payload, ensure_ascii=False) if not isinstance(payload, str) else payload
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown(result: dict, begin: str, end: str, title: str) -> str:
    meta = result["_meta"]
    load = meta["machine"]["load_1min"]
    lines = [begin, f"## {title}", "",
             f"Run {result['receipt']['ts']} at `{result['receipt']['harness_sha']}` on {meta['machine']['nproc']} cores, "
             f"Python {meta['machine']['python']}, 1-minute load {load[0]}–{load[1]}; corpus hash "
             f"`{result['receipt']['fixtures_hash']}`, {meta['seconds']} s. Hooks from: "
             + "; ".join(sorted({f'{k.split("/")[0]} {v}' for k, v in meta["installs"].items()})) + ".",
             "", *headline_table(result), "", *counts_table(result, walls=False)]
    late = {h: s["hook_deadlines"] for h, s in meta["summary"].items() if s.get("hook_deadlines")}
    if late:
        lines += ["", f"Hook runs that hit their deadline (printed nothing) during this run: {late}."]
    if result["seed_failures"] or meta["failures"]:
        lines += ["", f"**{len(result['seed_failures']) + len(meta['failures'])} units failed** (see the JSON's `_meta.failures`)."]
    return "\n".join([*lines, end])


HOW = (
    "`python -m benchmarks.brainbench` (`-v` prints what every turn injected; `--harness`, `--suite`, `--fixture` "
    "filter; `--jobs N`). Method and metric definitions: the docstrings of benchmarks/brainbench.py and "
    "benchmarks/brainbench_score.py. The JSON (benchmarks/results/brainbench-latest.json) holds every turn's text."
)


BASELINE_NOTE = (
    "The product as it was before the per-prompt reflex and the capture rework (`python -m benchmarks.brainbench "
    "--baseline` on that code rewrites this section; the latest run is the next section)."
)


def write_results_md(result: dict, baseline: bool = False) -> None:
    if baseline:
        section = markdown(result, BASE_BEGIN, BASE_END, "BrainBench baseline: memverbs before the reflex (development half)")
        replace_section(BASE_BEGIN, BASE_END, section.replace("\n\n", "\n\n" + BASELINE_NOTE + "\n\n", 1))
        return
    section = markdown(result, BEGIN, END, "BrainBench: cross-harness memory (`python -m benchmarks.brainbench`)")
    replace_section(BEGIN, END, section.replace("\n\n", "\n\n" + HOW + "\n\n", 1))
