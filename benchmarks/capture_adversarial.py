"""Capture against the adversarial sessions of capture_cases.py, into one real brain by the worker.

What is counted, byte for byte over everything capture writes (brain.db, its WAL and shared
memory, the full-text index's shadow tables, and capture's own state and checkpoints):
* secrets stored — cases (one secret shape each) whose secret is found anywhere;
* private text stored — cases (one `<private>` variant each) whose hidden text is found anywhere;
* facts from text the user did not write — stored facts carrying what a harness-written entry, a
  tool's output or pasted material said (capture_cases.INJECTED);
* genuine statements missed — sessions whose one real statement was not written (stored, or found
  already known: every session says the same), so a session not read at all cannot pass unnoticed;
* bad lines — sessions with one unreadable line: how many ended `ok`, with the line counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.capture_cases import (
    BAD_LINES,
    GENUINE,
    HARNESS_WRITTEN,
    INJECTED_NEEDLES,
    INVALID_UTF8,
    PRIVATE,
    SECRETS,
    write,
    write_bad_line,
)


def adversarial(home: Path, work: Path) -> dict:
    from memverbs.server.capture.worker import run_job  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    codes: dict[str, str] = {}
    written: dict[str, int] = {}  # facts each session's capture wrote (inserted, or the same fact already known)
    log = home / "logs" / "capture.jsonl"
    for case in [*SECRETS, *PRIVATE, *HARNESS_WRITTEN]:
        path, sid, harness = write(case, work / case.name.replace("/", "_"))
        codes[case.name] = run_job({"harness": harness, "session_id": sid or f"s-{case.name}", "transcript_path": str(path),
                                    "home": str(home), "event": "bench"})
        counts = json.loads(log.read_text().splitlines()[-1])["counts"]
        written[case.name] = counts.get("inserted", 0) + counts.get("duplicate", 0)
    bad = []
    for harness, name, raw in [*BAD_LINES, ("claude", "invalid-utf8", INVALID_UTF8)]:
        path, sid, h = write_bad_line(harness, raw, work / f"bad_{harness}_{name}", name)
        code = run_job({"harness": h, "session_id": f"bad-{harness}-{name}", "transcript_path": str(path), "home": str(home), "event": "bench"})
        line = json.loads(log.read_text().splitlines()[-1])
        bad.append({"case": f"{harness}/{name}", "code": code, "skipped": line["counts"].get("skipped_lines", 0)})
    stored = b"".join(p.read_bytes() for p in sorted(home.glob("brain.db*")) if p.is_file())
    stored += b"".join(p.read_bytes() for p in sorted((home / "capture").rglob("*.json")))
    runtime = Runtime(Home(home))
    try:
        facts = runtime.local_dispatcher().call("recall", {"entity": "people/me", "limit": 1000, "include_private": True}).body["facts"]
    finally:
        runtime.close()
    texts = [f["fact"] for f in facts]
    cases = [*SECRETS, *PRIVATE, *HARNESS_WRITTEN]
    return {
        "secret_cases": len(SECRETS),
        "secrets_stored": [c.name for c in SECRETS if any(n.encode() in stored for n in c.never)],
        "private_cases": len(PRIVATE),
        "private_stored": [c.name for c in PRIVATE if any(n.encode() in stored for n in c.never)],
        "harness_cases": len(HARNESS_WRITTEN),
        "facts_not_the_users": [t for t in texts if any(n in t for n in INJECTED_NEEDLES)],
        # Every session says GENUINE: stored once, then a `duplicate` of it for each later session.
        "genuine_missed": [c.name for c in cases if written[c.name] < 1] + ([] if GENUINE in texts else ["(never stored)"]),
        "not_ok": {name: code for name, code in codes.items() if code != "ok"},
        "bad_lines": len(bad),
        "bad_lines_ok": sum(1 for b in bad if b["code"] == "ok" and b["skipped"] >= 1),
        "bad_lines_failed": [b for b in bad if b["code"] != "ok" or b["skipped"] < 1],
    }


def public(folder: Path) -> list[dict]:
    """What capture keeps of each transcript in `folder` (Claude Code files, read as they are): the
    facts, for a person to judge; no brain is written."""
    from memverbs.server.capture.engine import plan_capture  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions  # noqa: PLC0415
    from memverbs.server.capture.reading import read_transcript  # noqa: PLC0415

    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        plan = plan_capture(read_transcript(path), CaptureOptions(max_facts=50))
        not_users = plan.page_body.split("## Not the user's words", 1)[1].count("\n- ") if "## Not the user's words" in plan.page_body else 0
        rows.append({"session": path.stem, "facts": [f.text for f in plan.facts], "not_users_words": not_users,
                     "skipped_lines": plan.skipped_lines})
    return rows
