"""`python -m benchmarks.capture [--public DIR] [--no-results-md]`: what automatic capture keeps, what it
never stores, and what it costs.

* Quality, on real sessions recorded from the real harness binaries against the fake model
  (benchmarks/capture_record.py; files and annotations in benchmarks/data/capture/; an OpenClaw
  session exported from its SQLite store one event a line, an opencode one as its store's rows,
  loaded into an opencode.db of opencode's schema here): precision and recall of the facts kept
  against what a careful person annotated (`keep`, where `*` stands for a commit hash or branch),
  and the events (commits, a test fixed) the session page must list instead (`events`).
* Privacy, planted: every recorded session and a planted corpus — one user turn, one command and
  one closing assistant message per secret class, each inside a "remember that …" statement, the
  worst case — captured into a real SQLite brain by the worker; the brain's files (brain.db, its
  WAL and shared memory, FTS shadow tables included) searched byte for byte.
* Adversarial (capture_adversarial.py over capture_cases.py): one session per secret shape,
  `<private>` variant and harness-written entry type, and sessions with a bad line: secrets
  stored, private text stored, facts from text the user did not write, bad lines survived.
* Cost (capture_cost.py): the hook's own wall and CPU time, and the worker's CPU time and peak RSS
  on transcripts heavy in the user's text, at 1 MB and 100 MB (fresh process each).
* `--public DIR`: what capture keeps from the Claude Code transcripts in DIR (public sessions
  nobody here wrote, not shipped in the repository), listed for a person to judge.

Targets (the issues'): precision ≥ 0.95, recall ≥ 0.7, secrets, private text and facts from text
the user did not write stored 0, hook ≤ 50 ms, capture CPU ≤ 1 s per MB and a 100 MB transcript
≤ 30 s, peak RSS ≤ 150 MB. Writes the "Capture" section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import capture_adversarial, capture_cost
from benchmarks.results_file import replace_section

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "capture"
BEGIN, END = "<!-- capture-benchmark:begin -->", "<!-- capture-benchmark:end -->"
SIZES = (1 << 20, 100 << 20)

PLANTED = {
    "aws-access-key": "AKIAJ5QXZ7NPL2W4EXRT",
    "aws-secret-key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "google-api-key": "AIzaSyD3xT9kQ2mN7pL4vR8wB1cF6hJ0sE5gU2y",
    "azure-storage": "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
    "github-token": "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
    "gitlab-token": "glpat-Xy9Zb8Wc7Vd6Ue5Tf4Sg",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "sk_live_51HqLyjWDarjtT1zdp7dcXYZ",
    "openai-key": "sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw",
    "anthropic-key": "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa",
    "npm-token": "npm_Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "url-password": "postgresql://deploy:Wh1sky-T4ngo-F0xtrot@db.prod.internal:5432/app",
    "env-assignment": "DB_PASSWORD=plaintext-rosebud-42",
    "env-quoted": 'SECRET_KEY="django-insecure-8x!k#v@q2m$w"',
    "bearer": "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
}
# The part of each planted text that must never be stored (for an assignment: the value).
PLANTED_NEEDLES = {
    "aws-secret-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "azure-storage": "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
    "private-key": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "url-password": "Wh1sky-T4ngo-F0xtrot",
    "env-assignment": "plaintext-rosebud-42",
    "env-quoted": "django-insecure-8x!k#v@q2m$w",
    "bearer": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
}
PLANTED_PRIVATE = ["the alarm code is 7391-kilo", "Dr. Weiss said the biopsy is benign"]


def _entry(kind: str, content: object, sid: str, cwd: str) -> str:
    role = "user" if kind == "user" else "assistant"
    return json.dumps({"type": kind, "sessionId": sid, "cwd": cwd, "uuid": str(uuid.uuid4()),
                       "timestamp": "2026-12-01T10:00:00.000Z", "message": {"role": role, "content": content}})


def planted_transcript(path: Path, sid: str, cwd: str, pad_to: int = 0) -> None:
    """A Claude Code transcript carrying every planted secret and private text, in every place
    capture reads: the user's statements, commands, tool output, the closing message."""
    lines = []
    for n, (kind, secret) in enumerate(PLANTED.items()):
        tid = f"toolu_{n}"
        lines.append(_entry("user", f"Remember that the {kind} for prod is {secret}. "
                                    f"<private>{PLANTED_PRIVATE[n % 2]}</private> From now on, rotate the {kind} monthly.", sid, cwd))
        lines.append(_entry("assistant", [{"type": "tool_use", "id": tid, "name": "Bash",
                                           "input": {"command": f"echo '{secret}' >> .env"}}], sid, cwd))
        lines.append(_entry("user", [{"type": "tool_result", "tool_use_id": tid, "content": secret, "is_error": False}], sid, cwd))
    lines.append(_entry("assistant", [{"type": "text", "text": "Stored: " + " ".join(PLANTED.values())}], sid, cwd))
    text = "\n".join(lines) + "\n"
    if pad_to:  # a long session: tool output of realistic size, until the file is `pad_to` bytes
        filler, n = [], 0
        while len(text) + sum(map(len, filler)) < pad_to:
            tid = f"toolu_pad{n}"
            filler.append(_entry("assistant", [{"type": "tool_use", "id": tid, "name": "Bash",
                                                "input": {"command": f"python -m pytest -q tests/test_{n}.py"}}], sid, cwd) + "\n")
            filler.append(_entry("user", [{"type": "tool_result", "tool_use_id": tid, "is_error": n % 3 == 0,
                                           "content": ("." * 70 + "\n") * 40 + f"{n} passed"}], sid, cwd) + "\n")
            filler.append(_entry("user", f"Now look at module {n}; keep the public API unchanged.", sid, cwd) + "\n")
            n += 1
        text = lines[0] + "\n" + "".join(filler) + "\n".join(lines[1:]) + "\n"
    path.write_text(text)


def _home(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env.update(MEMVERBS_HOME=str(root / "home"), HOME=str(root))
    subprocess.run([sys.executable, "-m", "memverbs", "init"], env=env, capture_output=True, check=True, cwd=root)
    return env


def corpus(tmp: Path) -> list[tuple[str, Path, str | None]]:
    """The annotated sessions: (name, transcript or store, session id in a store). Each file is named
    after its harness; `<name>.json` holds a SQLite store's rows (opencode's), loaded into a store under `tmp`."""
    sys.path[:0] = [str(ROOT / "tests" / "support")]
    from openclaw_support import opencode_store  # noqa: PLC0415 - the one builder of a recorded opencode.db

    notes = json.loads((DATA / "annotations.json").read_text())
    out: list[tuple[str, Path, str | None]] = []
    for name in sorted(notes):
        if (DATA / f"{name}.jsonl").exists():
            out.append((name, DATA / f"{name}.jsonl", None))
            continue
        export = DATA / f"{name}.json"
        db = opencode_store(tmp / name, export)
        out.append((name, db, json.loads(export.read_text())["session"][0]["id"]))
    return out


def _brain_bytes(env: dict) -> bytes:
    home = Path(env["MEMVERBS_HOME"])
    return b"".join(p.read_bytes() for p in sorted(home.glob("brain.db*")) if p.is_file())


def quality() -> dict:
    from memverbs.server.capture.engine import plan_capture  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions  # noqa: PLC0415
    from memverbs.server.capture.reading import read_transcript  # noqa: PLC0415

    notes = json.loads((DATA / "annotations.json").read_text())
    kept = correct = wanted = found = events = events_found = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = [(name, read_transcript(path, session_id=sid)) for name, path, sid in corpus(Path(tmp))]
    for name, transcript in sessions:
        note = notes[name]
        plan = plan_capture(transcript, CaptureOptions(max_facts=100))
        facts = [f.text for f in plan.facts]
        good = [f for f in facts if any(fnmatch.fnmatchcase(f.lower(), k.lower()) for k in note["keep"])]
        hit = [k for k in note["keep"] if any(fnmatch.fnmatchcase(f.lower(), k.lower()) for f in facts)]
        page_lines = [line[2:] for line in plan.page_body.splitlines() if line.startswith("- ")]
        listed = [e for e in note.get("events", []) if any(fnmatch.fnmatchcase(line.lower(), e.lower()) for line in page_lines)]
        kept, correct, wanted, found = kept + len(facts), correct + len(good), wanted + len(note["keep"]), found + len(hit)
        events, events_found = events + len(note.get("events", [])), events_found + len(listed)
        rows.append({"session": name, "harness": transcript.harness, "kept": facts, "junk": [f for f in facts if f not in good],
                     "missed": [k for k in note["keep"] if k not in hit],
                     "events_missed": [e for e in note.get("events", []) if e not in listed]})
    return {"precision": correct / kept if kept else 1.0, "recall": found / wanted if wanted else 1.0,
            "kept": kept, "wanted": wanted, "events": events, "events_listed": events_found, "sessions": rows}


def privacy() -> dict:
    notes = json.loads((DATA / "annotations.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        for name, path, sid in corpus(root):
            capture_cost.capture_in_process(env, path, name.split("-")[0], sid or name)  # each file is named after its harness
        planted = root / "planted.jsonl"
        planted_transcript(planted, "planted-session", str(root / "nowhere"))
        result = capture_cost.capture_in_process(env, planted, "claude", "planted-session")
        data = _brain_bytes(env)
        needles = {k: PLANTED_NEEDLES.get(k, v) for k, v in PLANTED.items()}
        recorded = [s for note in notes.values() for s in note["never"]]
        private = list(PLANTED_PRIVATE)
        return {
            "classes": len(PLANTED),
            "secrets_stored": sorted(k for k, v in needles.items() if v.encode() in data)
            + [s for s in recorded if s.encode() in data and "PIN" not in s],
            "private_stored": [p for p in private if p.encode() in data] + [s for s in recorded if "PIN" in s and s.encode() in data],
            "recorded_never": len(recorded),
            "planted_code": result["code"],
            "brain_bytes": len(data),
        }


def cost(sizes: tuple[int, ...] = SIZES) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        planted = root / "planted.jsonl"
        planted_transcript(planted, "hook-session", str(root / "nowhere"), pad_to=1 << 20)
        return {**capture_cost.hook(env, root, planted), "scale": capture_cost.scale(env, root, sizes)}


def adversarial() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        old = os.environ.get("MEMVERBS_HOME")
        os.environ["MEMVERBS_HOME"] = env["MEMVERBS_HOME"]
        try:
            return capture_adversarial.adversarial(Path(env["MEMVERBS_HOME"]), root / "cases")
        finally:
            if old is None:
                os.environ.pop("MEMVERBS_HOME", None)
            else:
                os.environ["MEMVERBS_HOME"] = old


def _mark(ok: bool) -> str:
    return "met" if ok else "**missed**"


def _names(q: dict) -> str:
    from memverbs.server.capture.engine import TITLES  # noqa: PLC0415

    names = [TITLES.get(h, h) for h in dict.fromkeys(row["harness"] for row in q["sessions"])]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _stores(q: dict) -> str:
    stored = sorted({row["harness"] for row in q["sessions"] if row["harness"] in ("openclaw", "opencode")})
    if not stored:
        return "each the file the binary wrote"
    from memverbs.server.capture.engine import TITLES  # noqa: PLC0415

    return " and ".join(f"{TITLES[h]}'s" for h in stored) + (" exported from their binaries' SQLite stores" if len(stored) > 1
                                                              else " exported from its binary's SQLite store")


def render(q: dict, p: dict, a: dict, c: dict, pub: list[dict] | None) -> str:
    h = c
    lines = [
        BEGIN,
        "## Capture (`python -m benchmarks.capture`)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on this machine (2 cores shared with other work; 1-min load {h['load_1min']:.1f}). "
        f"Quality on {len(q['sessions'])} sessions recorded from the real {_names(q)} binaries against the fake model "
        f"(benchmarks/capture_record.py; {_stores(q)}), {q['wanted']} facts and {q['events']} events annotated by hand in "
        "benchmarks/data/capture/annotations.json. Adversarial: one session per case of benchmarks/capture_cases.py, "
        "captured by the worker into one SQLite brain, everything capture wrote searched byte for byte.",
        "",
        "| measure | value | target | |",
        "|---|---|---|---|",
        f"| precision (facts kept that a careful person would keep) | {q['precision']:.2f} ({q['kept']} kept) | ≥ 0.95 | {_mark(q['precision'] >= 0.95)} |",
        f"| recall (annotated facts kept) | {q['recall']:.2f} (of {q['wanted']}) | ≥ 0.7 | {_mark(q['recall'] >= 0.7)} |",
        f"| events (commits, tests fixed) listed on the session page, not kept as facts | {q['events_listed']} of {q['events']} | all | "
        f"{_mark(q['events_listed'] == q['events'])} |",
        f"| secrets stored, adversarial ({a['secret_cases']} shapes, one session each: tokens, URLs, env lines, headers, password "
        f"flags, keys wrapped/split/base64/PuTTY, credentials in words) | {len(a['secrets_stored'])} | 0 | {_mark(not a['secrets_stored'])} |",
        f"| secrets stored, planted ({p['classes']} classes + {p['recorded_never']} in the recordings) | {len(p['secrets_stored'])} | 0 | "
        f"{_mark(not p['secrets_stored'])} |",
        f"| `<private>` text stored ({a['private_cases']} variants, one session each, + the planted and recorded ones) | "
        f"{len(a['private_stored']) + len(p['private_stored'])} | 0 | {_mark(not a['private_stored'] and not p['private_stored'])} |",
        f"| facts from text the user did not write ({a['harness_cases']} sessions: each harness-written entry type of the five "
        f"harnesses, tool output, pasted and quoted material) | {len(a['facts_not_the_users'])} | 0 | {_mark(not a['facts_not_the_users'])} |",
        f"| the user's own statement kept in every adversarial session | {len(a['genuine_missed'])} missed | 0 | {_mark(not a['genuine_missed'])} |",
        f"| sessions with a bad line (deep nesting, lone surrogate, content a number, message a list, dict tool id, …) "
        f"captured, the line skipped and counted | {a['bad_lines_ok']} of {a['bad_lines']} | all | {_mark(a['bad_lines_ok'] == a['bad_lines'])} |",
        f"| hook wall time, p50 / p95 of {capture_cost.HOOK_RUNS} (launcher exec → exit, worker forked) | "
        f"{h['hook_wall_ms_p50']:.0f} / {h['hook_wall_ms_p95']:.0f} ms (same run, p50: `python -I -S -c pass` "
        f"{h['bare_python_ms_p50']:.0f} ms, the launcher with `MEMVERBS_HOOKS=off` {h['launcher_floor_ms_p50']:.0f} ms) | ≤ 50 ms | "
        f"{_mark(h['hook_wall_ms_p95'] <= 50)} |",
        f"| hook CPU time, p50 (the hook process alone) | {h['hook_cpu_ms_p50']:.0f} ms (launcher floor "
        f"{h['launcher_floor_cpu_ms_p50']:.0f} ms) | | load-independent |",
    ]
    for row in c["scale"]:
        mb = row["bytes"] / 1048576
        target = 1.0 * mb if mb < 10 else 30.0
        lines.append(f"| capture CPU, {mb:.0f} MB transcript heavy in the user's text ({row['turns']} turns; fresh process"
                     f"{', median of 3' if mb < 10 else ''}; {', '.join(row['codes'])}) | {row['cpu_s']:.2f} s | ≤ {target:.0f} s | "
                     f"{_mark(row['cpu_s'] <= target and row['codes'] == ['ok'])} |")
        lines.append(f"| capture peak RSS, {mb:.0f} MB transcript | {row['rss_mb']:.0f} MB | ≤ 150 MB | {_mark(row['rss_mb'] <= 150)} |")
    lines += [
        "",
        "Timings on this shared machine are not final: the lead re-runs them on a quiet one. The CPU figures are the worker's "
        "own (user + system), which the load moves far less than the wall. Capture reads a transcript once, as a stream, "
        "holding the tool calls still waiting for their result and the session's bounded record, so its memory does not "
        "grow with the transcript; it stops looking for facts once it has 20 past `capture.max_facts`, and checkpoints "
        "every 4 MB so a capture its limits stop is resumed, not restarted.",
        "",
    ]
    if a["secrets_stored"] or a["private_stored"] or a["facts_not_the_users"] or a["genuine_missed"] or a["bad_lines_failed"] or a["not_ok"]:
        lines += [f"Adversarial failures: {json.dumps({k: a[k] for k in ('secrets_stored', 'private_stored', 'facts_not_the_users', 'genuine_missed', 'bad_lines_failed', 'not_ok')})}", ""]
    lines += ["Per recorded session (junk: kept but not annotated; missed: annotated but not kept):", ""]
    for row in q["sessions"]:
        lines.append(f"* `{row['session']}`: kept {len(row['kept'])}" + (f"; junk {row['junk']}" if row["junk"] else "")
                     + (f"; missed {row['missed']}" if row["missed"] else "")
                     + (f"; events not on the page {row['events_missed']}" if row["events_missed"] else ""))
    if pub is not None:
        kept = sum(len(r["facts"]) for r in pub)
        lines += ["", f"Public transcripts (`--public`): {len(pub)} sessions, {kept} facts kept, "
                  f"{sum(r['not_users_words'] for r in pub)} harness-written entries set apart as not the user's:", ""]
        lines += [f"* `{r['session']}`: {r['facts'] or 'nothing kept'}" for r in pub]
    lines += ["", END]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capture")
    parser.add_argument("--public", type=Path, help="a folder of Claude Code transcripts nobody here wrote: list what capture keeps")
    parser.add_argument("--sizes", default="1,100", help="transcript sizes for the cost, in MB (default 1,100)")
    parser.add_argument("--no-results-md", action="store_true", help="print the results; do not write RESULTS.md")
    args = parser.parse_args()
    q, p, a = quality(), privacy(), adversarial()
    c = cost(tuple(int(float(mb) * (1 << 20)) for mb in args.sizes.split(",")))
    pub = capture_adversarial.public(args.public) if args.public else None
    summary = {"quality": {k: v for k, v in q.items() if k != "sessions"}, "privacy": p, "adversarial": a, "cost": c, "public": pub}
    print(json.dumps(summary, indent=2))
    if not args.no_results_md:
        replace_section(BEGIN, END, render(q, p, a, c, pub))


if __name__ == "__main__":
    main()
