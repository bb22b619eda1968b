"""`python -m benchmarks.capture`: what automatic capture keeps, what it never stores, and what it costs.

* Quality, on real sessions recorded from the real harness binaries against the fake model
  (benchmarks/capture_record.py; files and annotations in benchmarks/data/capture/; an OpenClaw
  session exported from its SQLite store one event a line, an opencode one as its store's rows,
  loaded into an opencode.db of opencode's schema here):
  precision and recall of the facts kept against what a careful person annotated (`keep`, where
  `*` stands for a commit hash or branch).
* Privacy: every recorded session and a planted corpus — one user turn, one command and one
  closing assistant message per secret class (cloud keys, provider tokens, private keys, JWTs,
  passwords in URLs, `.env` assignments), each inside a "remember that …" statement, the worst case
  — is captured into a real SQLite brain by the worker; then the brain's files (brain.db, its WAL
  and shared memory, FTS shadow tables included) are searched byte for byte for every secret and
  every `<private>` text.
* Cost: the hook's own wall time (the lean launcher, as installed, from exec to exit, with the
  worker forked off), the worker's CPU time and peak RSS for a 1 MB transcript (a fresh process:
  interpreter, imports, settings, reading, detection, the writes).

Targets (the issue's): precision ≥ 0.9, recall ≥ 0.7, secrets and private text stored 0, hook ≤ 50 ms,
capture CPU ≤ 1 s per MB, peak RSS ≤ 150 MB. Writes the "Capture" section of RESULTS.md.
"""

from __future__ import annotations

import fnmatch
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.results_file import replace_section

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "capture"
BEGIN, END = "<!-- capture-benchmark:begin -->", "<!-- capture-benchmark:end -->"
HOOK_RUNS = 20

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


def _capture(env: dict, path: Path, harness: str, sid: str) -> dict:
    code = ("import json,sys,resource;from memverbs.server.capture.worker import run_job;"
            "c=run_job(json.loads(sys.argv[1]));u=resource.getrusage(resource.RUSAGE_SELF);"
            "print(json.dumps({'code':c,'cpu_s':u.ru_utime+u.ru_stime,'rss_mb':u.ru_maxrss/1024}))")
    job = {"harness": harness, "session_id": sid, "transcript_path": str(path), "home": env["MEMVERBS_HOME"], "event": "bench"}
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(job)], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _brain_bytes(env: dict) -> bytes:
    home = Path(env["MEMVERBS_HOME"])
    return b"".join(p.read_bytes() for p in sorted(home.glob("brain.db*")) if p.is_file())


def quality() -> dict:
    from memverbs.server.capture.engine import plan_capture  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions  # noqa: PLC0415
    from memverbs.server.capture.transcript import read_transcript  # noqa: PLC0415

    notes = json.loads((DATA / "annotations.json").read_text())
    kept = correct = wanted = found = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = [(name, read_transcript(path, session_id=sid)) for name, path, sid in corpus(Path(tmp))]
    for name, transcript in sessions:
        note = notes[name]
        facts = [f.text for f in plan_capture(transcript, CaptureOptions(max_facts=100)).facts]
        good = [f for f in facts if any(fnmatch.fnmatchcase(f.lower(), k.lower()) for k in note["keep"])]
        hit = [k for k in note["keep"] if any(fnmatch.fnmatchcase(f.lower(), k.lower()) for f in facts)]
        kept, correct, wanted, found = kept + len(facts), correct + len(good), wanted + len(note["keep"]), found + len(hit)
        rows.append({"session": name, "harness": transcript.harness, "kept": facts, "junk": [f for f in facts if f not in good],
                     "missed": [k for k in note["keep"] if k not in hit]})
    return {"precision": correct / kept if kept else 1.0, "recall": found / wanted if wanted else 1.0,
            "kept": kept, "wanted": wanted, "sessions": rows}


def privacy() -> dict:
    notes = json.loads((DATA / "annotations.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        for name, path, sid in corpus(root):
            _capture(env, path, name.split("-")[0], sid or name)  # each file is named after its harness
        planted = root / "planted.jsonl"
        planted_transcript(planted, "planted-session", str(root / "nowhere"))
        result = _capture(env, planted, "claude", "planted-session")
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


def cost() -> dict:
    from memverbs.hooks.launcher import bootstrap_argv  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        big = root / "big.jsonl"
        planted_transcript(big, "big-session", str(root / "nowhere"), pad_to=1 << 20)
        size = big.stat().st_size
        runs = [_capture(env, big, "claude", f"big-{n}") for n in range(3)]
        walls, cpus, bare, floor, floor_cpu = [], [], [], [], []
        log = Path(env["MEMVERBS_HOME"]) / "logs" / "capture.jsonl"
        for n in range(HOOK_RUNS):
            payload = json.dumps({"session_id": f"hook-{n}", "transcript_path": str(big), "cwd": str(root),
                                  "hook_event_name": "SessionEnd", "reason": "other"})
            before = len(log.read_text().splitlines()) if log.exists() else 0
            t0, c0 = time.perf_counter(), _children_cpu()
            subprocess.run([*bootstrap_argv(), "capture", "--harness", "claude"], input=payload, text=True, env=env,
                           capture_output=True, check=True)
            walls.append((time.perf_counter() - t0) * 1000)
            cpus.append((_children_cpu() - c0) * 1000)  # the hook alone: the worker is not our child to reap
            deadline = time.monotonic() + 30  # the worker, before the next run (it would compete for the CPU)
            while time.monotonic() < deadline and (len(log.read_text().splitlines()) if log.exists() else 0) <= before:
                time.sleep(0.05)
            # Interleaved with the hook's runs, so all three see the same load: the interpreter alone,
            # and the launcher's floor (the kill switch).
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
            bare.append((time.perf_counter() - t0) * 1000)
            t0, c0 = time.perf_counter(), _children_cpu()
            subprocess.run([*bootstrap_argv(), "capture", "--harness", "claude"], input="{}", text=True,
                           env={**env, "MEMVERBS_HOOKS": "off"}, capture_output=True, check=True)
            floor.append((time.perf_counter() - t0) * 1000)
            floor_cpu.append((_children_cpu() - c0) * 1000)
        walls.sort()
        return {
            "load_1min": os.getloadavg()[0],
            "bare_python_ms_p50": statistics.median(bare),
            "launcher_floor_ms_p50": statistics.median(floor),
            "transcript_bytes": size,
            "capture_cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "capture_rss_mb": max(r["rss_mb"] for r in runs),
            "hook_wall_ms_p50": statistics.median(walls),
            "hook_wall_ms_p95": walls[int(len(walls) * 0.95) - 1],
            "hook_cpu_ms_p50": statistics.median(cpus),
            "launcher_floor_cpu_ms_p50": statistics.median(floor_cpu),
        }


def _children_cpu() -> float:
    """CPU seconds of the children this process has reaped: a hook run's own, whatever the load (its wall is not)."""
    import resource  # noqa: PLC0415

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


def render(q: dict, p: dict, c: dict) -> str:
    lines = [
        BEGIN,
        "## Capture (`python -m benchmarks.capture`)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on this machine (2 cores shared with other work). Quality on {len(q['sessions'])} sessions recorded from the real "
        f"{_names(q)} binaries against the fake model (benchmarks/capture_record.py; {_stores(q)}), "
        f"{q['wanted']} facts annotated by hand in benchmarks/data/capture/annotations.json.",
        "",
        "| measure | value | target | |",
        "|---|---|---|---|",
        f"| precision (facts kept that a careful person would keep) | {q['precision']:.2f} ({q['kept']} kept) | ≥ 0.9 | {_mark(q['precision'] >= 0.9)} |",
        f"| recall (annotated facts kept) | {q['recall']:.2f} (of {q['wanted']}) | ≥ 0.7 | {_mark(q['recall'] >= 0.7)} |",
        f"| secrets stored ({p['classes']} planted classes + {p['recorded_never']} in the recordings; brain.db, WAL, shm bytes) "
        f"| {len(p['secrets_stored'])} | 0 | {_mark(not p['secrets_stored'])} |",
        f"| `<private>` text stored | {len(p['private_stored'])} | 0 | {_mark(not p['private_stored'])} |",
        f"| hook wall time, p50 / p95 of {HOOK_RUNS} (launcher exec → exit, worker forked) | "
        f"{c['hook_wall_ms_p50']:.0f} / {c['hook_wall_ms_p95']:.0f} ms (same run, p50: `python -I -S -c pass` "
        f"{c['bare_python_ms_p50']:.0f} ms, the launcher with `MEMVERBS_HOOKS=off` {c['launcher_floor_ms_p50']:.0f} ms; "
        f"1-min load {c['load_1min']:.1f} on 2 cores) | ≤ 50 ms | {_mark(c['hook_wall_ms_p95'] <= 50)} |",
        f"| hook CPU time, p50 (user + system, the hook process alone) | {c['hook_cpu_ms_p50']:.0f} ms (the launcher with "
        f"`MEMVERBS_HOOKS=off` {c['launcher_floor_cpu_ms_p50']:.0f} ms) | | load-independent: what the wall would be on an idle core |",
        f"| capture CPU, {c['transcript_bytes'] / 1048576:.2f} MB transcript (fresh process, median of 3) | "
        f"{c['capture_cpu_s']:.2f} s | ≤ 1 s | {_mark(c['capture_cpu_s'] <= 1.0)} |",
        f"| capture peak RSS | {c['capture_rss_mb']:.0f} MB | ≤ 150 MB | {_mark(c['capture_rss_mb'] <= 150)} |",
        "",
        "On a loaded machine every process start is slower (the interpreter alone took "
        f"{c['bare_python_ms_p50']:.0f} ms here, ~10 ms quiet, see the hooks table above), and the wall follows the load; "
        "the CPU time does not, and on an idle core the wall comes close to it. The hook's own share, its figures minus "
        "the launcher's floor (the interpreter, the bootstrap and `json`'s import, then the interpreter's teardown), was "
        f"{c['hook_wall_ms_p50'] - c['launcher_floor_ms_p50']:+.0f} ms of wall p50 and "
        f"{c['hook_cpu_ms_p50'] - c['launcher_floor_cpu_ms_p50']:+.1f} ms of CPU in this run: its work (reading and "
        "parsing the payload, `capture.enabled`, one fork and its log line) costs about what it saves by leaving with "
        "`os._exit` instead of a teardown, and it waits for no other process (it used to wait on a double fork's middle "
        f"child, and the harness's pipes on the worker). The corpus is small ({q['wanted']} annotated facts): the "
        "precision and recall say the rules behave on real "
        "transcripts, not how they generalise.",
        "",
        "Per session (junk: kept but not annotated; missed: annotated but not kept):",
        "",
    ]
    for row in q["sessions"]:
        lines.append(f"* `{row['session']}`: kept {len(row['kept'])}"
                     + (f"; junk {row['junk']}" if row["junk"] else "") + (f"; missed {row['missed']}" if row["missed"] else ""))
    lines += ["", END]
    return "\n".join(lines)


def main() -> None:
    q, p, c = quality(), privacy(), cost()
    print(json.dumps({"quality": {k: v for k, v in q.items() if k != "sessions"}, "privacy": p, "cost": c}, indent=2))
    replace_section(BEGIN, END, render(q, p, c))


if __name__ == "__main__":
    main()
