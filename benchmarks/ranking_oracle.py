"""The ranking oracle, tried as an attacker would: guessing a private row's words through the order of search results.

    python -m benchmarks.ranking_oracle                 # 24 trials on SQLite and on Postgres (pgserver); writes RESULTS.md
    python -m benchmarks.ranking_oracle --trials 6 --backends sqlite --no-write

A real `memverbs serve --http` and a read-only token (scope `read`: world
pages only). Each trial, the owner writes a world page whose facts fence holds
a private row repeating one of four candidate words (chosen at random), and six
decoy world pages holding the page's own keyword once to six times: a tuned
ladder around it. The attacker searches `<keyword> <candidate>` for each
candidate and guesses the one whose query puts the page highest among the
decoys (a tie: one of the tied at random). A ranking that counted the private
row lifts the page for the right word only: 4 of 4. One that ranks as if the
row did not exist gives the same order for every candidate, and the guess is
chance (1 in 4). Also counted: queries whose answer differed between
candidates at all (0 when nothing leaks).

And what the world view costs a write on SQLite (`--cost-pages`, 0 skips it):
`put_page` (400-word pages with a private row) and `remember`, in process,
on two brains written in turn — one with the world-view indexes' triggers, one
with them dropped — so both see the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.http_load import HEADERS, RemoteServer, call_body, machine, make_token
from benchmarks.results_file import replace_section

BEGIN, END = "<!-- ranking-oracle:begin -->", "<!-- ranking-oracle:end -->"
CANDIDATES = ("quartz", "onyx", "topaz", "jade")
DECOYS = 6


def trial_pages(t: int, secret: str) -> list[tuple[str, str]]:
    keyword = f"kw{t}x"
    pages = [(f"notes/target-{t}", f"# Target {t}\n{keyword} and some world text.\n<!-- facts -->\n- an open row\n"
                                   f"- [private] {secret} {secret} {secret}\n<!-- /facts -->\n")]
    pages += [(f"notes/decoy-{t}-{k}", f"# Decoy {t} {k}\n{' '.join([keyword] * k)} filler words here.\n")
              for k in range(1, DECOYS + 1)]
    return pages


def attack(url: str, token: str, t: int, rng: random.Random) -> tuple[str, bool]:
    """The attacker's guess for trial `t`, and whether the candidates' answers differed at all."""
    import httpx  # noqa: PLC0415

    keyword, target = f"kw{t}x", f"notes/target-{t}"
    places: dict[str, int] = {}
    orders = set()
    with httpx.Client(headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=60) as http:
        for guess in CANDIDATES:
            r = http.post(url, json=call_body(1, "search", {"query": f"{keyword} {guess}", "limit": 20}))
            results = json.loads(r.json()["result"]["content"][0]["text"])["results"]
            order = [x["slug"] for x in results]
            orders.add(tuple(order))
            places[guess] = order.index(target) if target in order else len(order)
    best = min(places.values())
    return rng.choice([g for g, p in places.items() if p == best]), len(orders) > 1


def run_backend(backend: str, trials: int, seed: int) -> dict:
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix=f"memverbs-oracle-{backend}-"))
    pg = None
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    try:
        home = tmp / "home"
        home.mkdir()
        if backend == "postgres":
            import pgserver  # noqa: PLC0415

            pg = pgserver.get_server(tmp / "pg", cleanup_mode="delete")
            pg.psql("CREATE DATABASE oracle")
            url = pg.get_uri("oracle")
            (home / "config.toml").write_text(f'[brain]\nurl = "{url}"\n', encoding="utf-8")
        runtime = Runtime(Home(home))
        runtime.create_brain()
        local = runtime.local_dispatcher()
        secrets = [rng.choice(CANDIDATES) for _ in range(trials)]
        for t, secret in enumerate(secrets):
            for slug, content in trial_pages(t, secret):
                assert not local.call("put_page", {"slug": slug, "content": content}).is_error
        runtime.close()
        token = make_token(home, "oracle-reader", scopes="read")
        right = differed = 0
        started = time.monotonic()
        with RemoteServer(home, env=env) as server:
            for t, secret in enumerate(secrets):
                guess, leaked = attack(server.url, token, t, rng)
                right += guess == secret
                differed += leaked
            server.stop()
        return {"backend": backend, "trials": trials, "candidates": len(CANDIDATES), "right": right,
                "chance": round(trials / len(CANDIDATES), 1), "answers_differed": differed,
                "wall_s": round(time.monotonic() - started, 1)}
    finally:
        if pg is not None:
            pg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


WORLD_TRIGGERS = ("pages_world_fts_ai", "pages_world_fts_au", "pages_world_fts_ad", "facts_world_fts_ai",
                  "facts_world_fts_au", "facts_world_fts_ad")


def write_cost(pages: int) -> dict:
    """put_page and remember p50 (ms) with the world view's triggers and without, interleaved."""
    import statistics  # noqa: PLC0415

    from benchmarks.corpus import init_home  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    rng = random.Random(1)
    words = [f"w{i}" for i in range(3000)]
    tmp = Path(tempfile.mkdtemp(prefix="memverbs-oracle-cost-"))
    runtimes = {}
    try:
        for name in ("with", "without"):
            init_home(tmp / name)
            runtimes[name] = Runtime(Home(tmp / name))
        for trigger in WORLD_TRIGGERS:
            runtimes["without"].brain().db.execute(f"DROP TRIGGER {trigger}")
        times: dict[str, dict[str, list[float]]] = {k: {"put_page": [], "remember": []} for k in runtimes}
        for i in range(pages):
            body = (f"# P{i}\n" + " ".join(rng.choice(words) for _ in range(400)) +
                    "\n<!-- facts -->\n- a row\n- [private] hidden words\n<!-- /facts -->\n")
            fact = f"fact {i} " + " ".join(rng.choice(words) for _ in range(8))
            for name in (("with", "without") if i % 2 else ("without", "with")):
                local = runtimes[name].local_dispatcher()
                for verb, args in (("put_page", {"slug": f"notes/p{i}", "content": body}),
                                   ("remember", {"fact": fact, "provenance": "t", "entity": f"notes/p{i}"})):
                    t0 = time.perf_counter()
                    assert not local.call(verb, args).is_error
                    times[name][verb].append((time.perf_counter() - t0) * 1000)
        return {name: {verb: round(statistics.median(v), 2) for verb, v in by.items()} for name, by in times.items()} | {
            "pages": pages, "load_average_1m": round(os.getloadavg()[0], 1)}
    finally:
        for runtime in runtimes.values():
            runtime.close()
        shutil.rmtree(tmp, ignore_errors=True)


def markdown(m: dict, rows: list[dict], cost: dict | None = None) -> str:
    lines = [
        BEGIN,
        "## Ranking oracle: guessing a private row through search order (`python -m benchmarks.ranking_oracle`)",
        "",
        f"Measured {m['date']} on {m['nproc']} cores (the figures are counts, not timings). A real `serve --http`, a "
        "read-only token. Each trial: a world page whose private facts-fence row repeats one of four candidate words "
        "(at random), beside six decoys holding its keyword one to six times; the attacker searches `<keyword> "
        "<candidate>` for each candidate and guesses the one that ranks the page highest (ties at random).",
        "",
        "| backend | trials | guesses right | chance | trials whose answers differed between candidates |",
        "|---|---|---|---|---|",
        *(f"| {r['backend']} | {r['trials']} | {r['right']} | {r['chance']} | {r['answers_differed']} |" for r in rows),
        "",
        "Before (the issue's measurement): 4 of 4 guesses right, on SQLite and on Postgres through a read-only HTTP "
        "token. Now an untrusted caller's ranking and matches read each page as if the private rows it may not read "
        "did not exist (SQLite: an FTS5 index of the world view, bm25's statistics included; Postgres: each page's "
        "vector without its private rows), so every candidate gets the same answer and the guess is chance. "
        "tests/server/verbs/test_ranking_oracle.py holds it as a property on both backends (pages and facts, "
        "hypothesis): an untrusted caller's answers equal those of the same brain without its private material.",
    ]
    if cost:
        lines += [
            "",
            f"What it costs a write on SQLite ({cost['pages']} pages of 400 words with a private row, and a fact each, "
            "in process on two brains written in turn, 1-minute load "
            f"{cost['load_average_1m']}: a loaded machine): `put_page` p50 {cost['with']['put_page']} ms with the "
            f"world-view indexes, {cost['without']['put_page']} ms without; `remember` p50 {cost['with']['remember']} ms "
            f"and {cost['without']['remember']} ms. The page's world text is indexed a second time (its own copy: "
            "about the page's text again on disk); a page without a private row skips the line walk.",
        ]
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranking_oracle", description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cost-pages", type=int, default=600)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows = [run_backend(b, args.trials, args.seed) for b in args.backends.split(",")]
    cost = write_cost(args.cost_pages) if args.cost_pages else None
    print(json.dumps({"oracle": rows, "write_cost": cost}, indent=2))
    if not args.no_write:
        replace_section(BEGIN, END, markdown(machine(), rows, cost))
    return 0 if all(r["answers_differed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
