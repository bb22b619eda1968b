"""BrainBench's figures as people read them: the tables printed per harness, the per-turn reading (`-v`)
and the RESULTS.md section, all drawn from the JSON result (brainbench_result.py)."""

from __future__ import annotations

import json

from benchmarks import brainbench_score as score
from benchmarks.results_file import replace_section

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
    "facts_echoing_injection": "stored facts that repeat what memverbs injected into the session and the user never said",
    "facts_other_sources": "facts a session's capture wrote outside the session's source",
    "carried_tokens_per_turn": "tokens of context re-sent unchanged (OpenClaw's cached pack after the first prompt), not counted as injected",
    "hook_deadlines": "hook runs that hit their deadline and printed nothing (the hooks log's `deadline`)",
}
HEADLINE = ("know_to_ask_failure_rate", "false_fire_rate", "push_precision", "push_recall", "continuity",
            "cross_source_injections", "injected_tokens_per_turn", "fidelity", "provenance")
BEGIN, END = "<!-- brainbench:begin -->", "<!-- brainbench:end -->"
BASE_BEGIN, BASE_END = "<!-- brainbench-baseline:begin -->", "<!-- brainbench-baseline:end -->"


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
    load = meta["machine"]["load_1min"]
    out = [f"BrainBench ({len({c for cell in result['cells'] for c in cell['fixtures']})} fixtures, "
           f"{meta['seconds']} s, 1-minute load {load[0]} → {load[1]})", "", *headline_table(result), "",
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
             f"Python {meta['machine']['python']}, 1-minute load {load[0]} at the start and {load[1]} at the end; corpus hash "
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
    "--baseline` on that code rewrites this section; a run without `--baseline` writes the latest figures in a section of their own after it)."
)


def write_results_md(result: dict, baseline: bool = False) -> None:
    if baseline:
        section = markdown(result, BASE_BEGIN, BASE_END, "BrainBench baseline: memverbs before the reflex (development half)")
        replace_section(BASE_BEGIN, BASE_END, section.replace("\n\n", "\n\n" + BASELINE_NOTE + "\n\n", 1))
        return
    section = markdown(result, BEGIN, END, "BrainBench: cross-harness memory (`python -m benchmarks.brainbench`)")
    replace_section(BEGIN, END, section.replace("\n\n", "\n\n" + HOW + "\n\n", 1))
