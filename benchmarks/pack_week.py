"""Pack quality over a realistic week in two repositories: does the user's word survive a busy week?

    python -m benchmarks.pack_week             # print the report and both packs
    python -m benchmarks.pack_quality          # runs this too, and writes it to RESULTS.md

Two real git repositories (`billing`, a Python service, and `webapp`, its TypeScript front end)
and seven days of work in each, written the way it is in use: each repository's agent remembers
its decisions through the MCP stdio server started in that repository (no project named), and
what capture takes from each day's sessions goes through the same server with capture's
provenance (`capture:claude session <id>`): the user's statements ("Always use uv, never pip",
"From now on, keep pull requests under 300 lines", "Remember that I'm on holiday …") and the
day's commits as events, five or six a day. The user's own standing preference was set a month
before, through the CLI outside any repository. A benchmark cannot wait a week, so once written,
each fact's clock (`valid_from`, `created_at`) is set back to the day and hour it belongs to;
nothing else is touched. Then a session starts in each repository through the real hook process,
and its pack is read line by line:

* the user's word: the repository's rules and statements the user made there (and the
  standing preference) that appear in the pack, over all of them;
* commits: event lines (a busy week has ~35 of them; they must not crowd out the rest);
* the project's decisions that appear (the agent's own facts);
* unrelated: the other repository's material (target 0).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.hook_timing import lean_argv
from benchmarks.processes import memverbs_cmd
from benchmarks.stdio_client import StdioClient

DAY_MS = 86_400_000
CAPTURED = "capture:claude session"

# Per repository, per day (1 = six days ago, 7 = today): (what the user said, kind), the agent's decisions, commit subjects.
WEEK: dict[str, dict] = {
    "billing": {
        "remote": "git@github.com:acme/billing.git",
        "said": {1: [("Always use uv, never pip.", "preference")],
                 2: [("Keep pull requests under 300 lines.", "preference")],
                 3: [("Always write commit subjects in the imperative mood, without ticket numbers.", "preference")],
                 4: [("I'm on holiday from 22 December to 3 January.", "fact")]},
        "decided": {1: ["Billing generates invoices at 06:00 UTC", "Billing stores amounts as integer cents"],
                    2: ["Billing talks to Stripe only through billing/adapters/stripe.py", "Billing's tests run with pytest -n auto"],
                    3: ["Billing retries failed webhooks three times with exponential backoff",
                        "Billing's migrations live in migrations/ and run with alembic"],
                    4: ["Billing's staging deploys from main every night"],
                    5: ["Billing dropped Python 3.9", "Billing's API answers errors as RFC 7807 problem details"],
                    6: ["Billing caches exchange rates for 15 minutes", "Billing's CSV export streams rows"],
                    7: ["Billing renders invoice PDFs with WeasyPrint"]},
        "committed": {5: ["Finish the dunning retry schedule before the holiday"]},
        "commits": ["Add webhook retry backoff", "Fix rounding in VAT totals", "Move Stripe calls behind the adapter",
                    "Stream the CSV export", "Cache exchange rates", "Bump alembic", "Render invoices with WeasyPrint",
                    "Drop Python 3.9 from CI", "Return problem details on 4xx", "Tidy the dunning templates"],
    },
    "webapp": {
        "remote": "https://github.com/acme/webapp",
        "said": {1: [("Always use pnpm, never npm.", "preference")],
                 3: [("From now on, write components as function components with hooks.", "preference")]},
        "decided": {1: ["Webapp is built with Vite and React 18"],
                    2: ["Webapp's API client is generated from the billing OpenAPI spec"],
                    3: ["Webapp keeps server state in TanStack Query"],
                    4: ["Webapp's end-to-end tests run in Playwright"],
                    5: ["Webapp's design tokens live in src/theme/tokens.ts"],
                    6: ["Webapp lazy-loads the invoices page"],
                    7: ["Webapp shows amounts with Intl.NumberFormat"]},
        "committed": {6: ["Ship the invoices page redesign on Friday"]},
        "commits": ["Generate the API client", "Add the invoices table", "Lazy-load the invoices route", "Fix the date picker",
                    "Switch to TanStack Query", "Add Playwright smoke test", "Use design tokens in buttons"],
    },
}
STANDING = ("I prefer short answers with code first", 30)  # the user's own, set a month ago from outside any repository
COMMITS_A_DAY = {"billing": 6, "webapp": 4}


def _repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, check=True)
    return path


def grow(tmp: Path, env: dict, now: int) -> tuple[dict[str, Path], dict[str, dict[str, list[str]]]]:
    """The week's brain; returns the repositories and, per repository, the texts of each part."""
    def cli(cwd: Path, *args: str, stdin: str | None = None) -> dict:
        out = subprocess.run([*memverbs_cmd(), *args], cwd=cwd, env=env, input=stdin, text=True, check=True, capture_output=True)
        return json.loads(out.stdout) if "--json" in args else {}

    outside = tmp / "elsewhere"
    outside.mkdir()
    cli(outside, "init")
    cli(outside, "put-page", "people/me", stdin="---\ntitle: Me\ntype: person\n---\nThe user of these repositories.\n")
    clocks: dict[int, int] = {}  # fact id -> the time it belongs to
    standing = cli(outside, "remember", STANDING[0], "--provenance", "the user", "--entity", "people/me",
                   "--kind", "preference", "--json")
    clocks[int(standing["id"])] = now - STANDING[1] * DAY_MS
    repos: dict[str, Path] = {}
    parts: dict[str, dict[str, list[str]]] = {}
    for name, week in WEEK.items():
        repos[name] = _repo(tmp / "code" / name, week["remote"])
        cli(repos[name], "put-page", f"projects/{name}",
            stdin=f"---\ntitle: {name.title()}\ntype: project\n---\n{name.title()}, one of my repositories.\n")
        got = parts[name] = {"said": [], "decided": [], "committed": [], "commits": []}
        subjects = iter(week["commits"] * 10)
        with StdioClient([*memverbs_cmd(), "serve"], env=env, cwd=repos[name]) as agent:
            for day in range(1, 8):
                start = now - (7 - day) * DAY_MS - 8 * 3600_000  # each day's work starts 8 hours before this hour
                session = f"{CAPTURED} {name}-day{day}"
                writes = [(30 + k * 90, "decided", {"fact": t, "provenance": "agent session"})
                          for k, t in enumerate(week["decided"].get(day, []))]
                writes += [(60 + k, "committed", {"fact": t, "provenance": "agent session", "kind": "commitment"})
                           for k, t in enumerate(week["committed"].get(day, []))]
                writes += [(120 + k, "said", {"fact": t, "provenance": session, "kind": kind})
                           for k, (t, kind) in enumerate(week["said"].get(day, []))]
                writes += [(180 + k * 45, "commits", {"fact": f"Commit {abs(hash((name, day, k))) % 16**10:010x} on main: "
                                                      f"{next(subjects)}", "provenance": session, "kind": "event"})
                           for k in range(COMMITS_A_DAY[name])]
                for minute, part, args in writes:
                    body, _, is_error = agent.call("remember", args)
                    if is_error:
                        raise RuntimeError(body)
                    clocks[int(body["id"])] = start + minute * 60_000
                    got[part].append(args["fact"])
    # The one step a benchmark cannot take through the product: a week passing.
    with sqlite3.connect(Path(env["MEMVERBS_HOME"]) / "brain.db") as db:
        db.executemany("UPDATE facts SET valid_from = ?, created_at = ? WHERE id = ?",
                       [(at, at, fact_id) for fact_id, at in clocks.items()])
    return repos, parts


def session_pack(env: dict, cwd: Path, session: str) -> str:
    payload = {"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(cwd)}
    # A roomy deadline: this reads what the pack says, not how fast (a loaded machine must not empty it).
    hook = [*lean_argv(sys.executable), "session-start", "--deadline-ms", "20000", "--harness", "claude"]
    proc = subprocess.run(hook, input=json.dumps(payload),
                          env=env, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def read(text: str, name: str, parts: dict[str, dict[str, list[str]]]) -> dict:
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    mine = parts[name]
    users = [*mine["said"], STANDING[0]]
    others = [t for other, p in parts.items() if other != name for texts in p.values() for t in texts]
    shown = [t for t in users if any(t.rstrip(".") in line for line in lines)]
    return {
        "lines": len(lines),
        "users_word": f"{len(shown)} of {len(users)}",
        "users_word_share": round(len(shown) / len(users), 3),
        "users_missing": [t for t in users if t not in shown],
        "commit_lines": sum("event: Commit " in line for line in lines),
        "commits_written": len(mine["commits"]),
        "decisions": sum(any(t in line for t in mine["decided"]) for line in lines),
        "decisions_written": len(mine["decided"]),
        "unrelated": sum(any(t in line for t in others) for line in lines),
        "text": text,
    }


def run() -> dict:
    now = int(time.time() * 1000)
    with tempfile.TemporaryDirectory(prefix="memverbs-packweek-") as tmp_name:
        tmp = Path(tmp_name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        env["MEMVERBS_HOME"] = str(tmp / "home")
        repos, parts = grow(tmp, env, now)
        return {name: read(session_pack(env, path, f"pw-{name}"), name, parts) for name, path in repos.items()}


def markdown(week: dict) -> list[str]:
    rows = ["| repository | lines | the user's word in the pack | commit lines (of the week's) | decisions (of the week's) | "
            "the other repository's lines (0) |", "|---|---|---|---|---|---|"]
    for name, r in week.items():
        rows.append(f"| {name} | {r['lines']} | {r['users_word']} | {r['commit_lines']} (of {r['commits_written']}) | "
                    f"{r['decisions']} (of {r['decisions_written']}) | {r['unrelated']} |")
    return rows


def main() -> int:
    week = run()
    print("\n".join(markdown(week)))
    for name, r in week.items():
        print(f"\n--- {name}: missing {r['users_missing']}\n{r['text']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
