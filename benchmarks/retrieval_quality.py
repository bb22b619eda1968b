"""Retrieval quality: R@5 and P@5 of recall's search arm, keyword-only versus hybrid, on a labelled corpus.

    python -m benchmarks.retrieval_quality [--json] [--no-write]

Both runs use real brains (a throwaway home each) and the real verbs; the
hybrid run embeds with the deterministic offline test embedder
(memverbs.server.providers.testing), so its numbers show what the hybrid
machinery adds over keywords, not how good a real model is. Real-model numbers
need a real provider: configure one and pass `--provider` to use the settings
of $MEMVERBS_HOME instead of the test embedder.

R@5: the share of a query's relevant pages found in its first 5 results.
P@5: the share of the (up to 5) first results that are relevant.
Results land in benchmarks/RESULTS.md under "## Retrieval quality" (only that
section is rewritten).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.retrieval_corpus import PAGES, QUERIES
from memverbs.server.home import Home
from memverbs.server.providers.config import Providers
from memverbs.server.providers.testing import HashingEmbedder
from memverbs.server.runtime import Runtime
from memverbs.server.settings import load_settings

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Retrieval quality"
K = 5


def page_markdown(title: str, body: str, aliases: list[str]) -> str:
    front = [f"title: {title}"] + ([f"aliases: {json.dumps(aliases)}"] if aliases else [])
    return "---\n" + "\n".join(front) + "\n---\n" + body + "\n"


def run(providers_for) -> dict:
    """Seed the corpus in a fresh home and score every query; `providers_for(settings)` picks the embedder."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        Runtime(home).create_brain()
        runtime = Runtime(home, providers=providers_for(load_settings(home)))
        try:
            dispatcher = runtime.mcp_dispatcher("full")
            for slug, title, body, aliases in PAGES:
                outcome = dispatcher.call("put_page", {"slug": slug, "content": page_markdown(title, body, aliases)})
                assert not outcome.is_error, outcome.body
            rows = []
            for query, relevant, kind in QUERIES:
                body = dispatcher.call("recall", {"query": query, "limit": K}).body
                got = [r["slug"] for r in body["results"]][:K]
                hits = len(set(got) & set(relevant))
                rows.append(
                    {
                        "query": query,
                        "kind": kind,
                        "recall": hits / len(relevant),
                        "precision": hits / len(got) if got else 0.0,
                        "returned": got,
                        "degraded": body.get("search_degraded"),
                    }
                )
        finally:
            runtime.close()
    return summarise(rows)


def summarise(rows: list[dict]) -> dict:
    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 3) if values else 0.0

    out: dict = {"queries": rows}
    for kind in ("all", "keyword", "paraphrase"):
        picked = [r for r in rows if kind == "all" or r["kind"] == kind]
        out[kind] = {"n": len(picked), "R@5": mean([r["recall"] for r in picked]), "P@5": mean([r["precision"] for r in picked])}
    return out


def table(results: dict[str, dict]) -> str:
    lines = ["| run | queries | R@5 all | P@5 all | R@5 keyword | P@5 keyword | R@5 paraphrase | P@5 paraphrase |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['all']['n']} | {r['all']['R@5']:.3f} | {r['all']['P@5']:.3f} | {r['keyword']['R@5']:.3f} | "
            f"{r['keyword']['P@5']:.3f} | {r['paraphrase']['R@5']:.3f} | {r['paraphrase']['P@5']:.3f} |"
        )
    return "\n".join(lines)


def machine() -> str:
    load = os.getloadavg()[0]
    return (
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {datetime.now(UTC).strftime('%Y-%m-%d')}, "
        f"1-minute load average {load:.2f} at the end (the machine is shared)"
    )


def write_section(subheading: str, text: str) -> None:
    """Replace one `### subheading` block inside "## Retrieval quality" (created if missing); nothing else changes."""
    doc = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    block = f"### {subheading}\n\n{text.strip()}\n"
    if HEADING not in doc:
        doc = doc.rstrip() + f"\n\n{HEADING}\n\n{block}"
    else:
        start = doc.index(HEADING)
        nxt = re.search(r"^## ", doc[start + len(HEADING):], re.MULTILINE)
        end = start + len(HEADING) + nxt.start() if nxt else len(doc)
        section = doc[start:end]
        pattern = re.compile(rf"^### {re.escape(subheading)}\n.*?(?=^### |\Z)", re.MULTILINE | re.DOTALL)
        if pattern.search(section):
            section = pattern.sub(lambda _: block + "\n", section)
        else:
            section = section.rstrip() + f"\n\n{block}\n"
        doc = doc[:start] + section.rstrip() + "\n" + ("\n" + doc[end:].lstrip() if doc[end:].strip() else "")
    RESULTS.write_text(doc.rstrip() + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval_quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the full results as JSON")
    parser.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    parser.add_argument("--provider", action="store_true", help="hybrid with $MEMVERBS_HOME's configured embedding provider")
    args = parser.parse_args(argv)

    real = load_settings(Home.from_env()) if args.provider else None
    results = {
        "keyword-only": run(lambda settings: Providers(settings)),
        "hybrid (test embedder)" if real is None else f"hybrid ({real.embeddings.model})": run(
            (lambda settings: Providers(settings, embedder=HashingEmbedder(), chat=None)) if real is None else (lambda _: Providers(real))
        ),
    }
    note = (
        "The hybrid run uses the deterministic offline test embedder (hashed bag of concepts with a small synonym "
        "table), so it shows what the hybrid machinery adds over keywords, not how good a real model is. "
        "Real-model numbers need a real provider: `python -m benchmarks.retrieval_quality --provider`."
        if real is None
        else f"Hybrid run with the configured provider ({real.embeddings.provider}/{real.embeddings.model})."
    )
    if args.json:
        print(json.dumps({"machine": machine(), "note": note, "results": results}, indent=2))
    else:
        print(table(results))
        print()
        print(note)
    if not args.no_write:
        text = (
            f"{len(PAGES)} pages, {len(QUERIES)} queries ({sum(q[2] == 'keyword' for q in QUERIES)} keyword, "
            f"{sum(q[2] == 'paraphrase' for q in QUERIES)} paraphrase); `python -m benchmarks.retrieval_quality`; "
            f"{machine()}.\n\n{table(results)}\n\n{note} R@5: share of a query's relevant pages in its first 5 results; "
            "P@5: share of the (up to 5) first results that are relevant."
        )
        write_section("Labelled corpus: keyword-only vs hybrid", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
