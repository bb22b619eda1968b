"""The detached capture worker: one session's transcript into the brain, then exit.

Started by hooks/capture.py in a process of its own (its CPU time, memory and wall clock are
capped there). It loads the full settings (off the hook's path, pydantic is fine here), finds
the transcript (the payload's `transcript_path`, else the harness's own store), skips it when
unchanged since its last capture, and captures it through the dispatcher as the trusted local
caller, with the optional LLM pass when `capture.llm` is on. What happened is one line in
`$MEMVERBS_HOME/logs/capture.jsonl`: codes and counts (the LLM pass's code, facts and spend),
never text.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, BrainMissing, ConfigError
from memverbs.server.home import REMOTE_RECEIPT, Home

LOG_NAME = "capture.jsonl"


def run_job(job: dict) -> str:
    started = time.monotonic()
    home = Home(Path(job["home"]))
    counts: dict = {}
    try:
        code, counts = _run(home, job)
    except BrainMissing:
        code = "no_brain"
    except BrainLocked:
        code = "brain_locked"
    except BrainCorrupt:
        code = "brain_corrupt"
    except BrainError:
        code = "brain_error"
    except ConfigError:
        code = "config_error"
    except Exception as exc:  # noqa: BLE001 - a detached worker's boundary: what broke goes to the log, by type
        code = f"internal_{type(exc).__name__}"
    log_capture(home, job.get("harness", "?"), job.get("session_id", ""), job.get("event", ""), code, counts, started)
    return code


def _run(home: Home, job: dict) -> tuple[str, dict]:
    from memverbs.server.capture.engine import apply_plan, plan_capture  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions, Spend  # noqa: PLC0415
    from memverbs.server.capture.state import SessionState  # noqa: PLC0415
    from memverbs.server.capture.stores import find_session, is_subagent  # noqa: PLC0415
    from memverbs.server.capture.transcript import READERS, read_transcript  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.settings import load_settings  # noqa: PLC0415

    settings = load_settings(home)
    if not settings.capture.enabled:
        return "capture_off", {}
    harness, session = job["harness"], job["session_id"]
    if (home.integrations / harness / REMOTE_RECEIPT).exists():
        return "remote_brain", {}  # a harness wired to a remote brain: capture writes to the local brain only
    given = job.get("transcript_path")
    # A named file that is gone (OpenClaw names a session's file only when one exists; a harness may
    # have moved it) falls back to the harness's own store, by session id.
    path = given if given and os.path.isfile(given) else find_session(harness, session)
    if not path or not os.path.isfile(path):
        return "no_transcript", {}
    if is_subagent(harness, str(path), session):
        return "subagent", {}  # opencode fires session.idle for a subagent's session too
    state = SessionState(str(home.root), harness, session)
    with state.locked():
        if state.unchanged(str(path)):
            return "unchanged", {}
        stamp = state.stamp(str(path))
        transcript = read_transcript(path, harness if harness in READERS else None, session_id=session)
        transcript.cwd = transcript.cwd or job.get("cwd")
        options = CaptureOptions.from_settings(settings)
        runtime = Runtime(home)
        try:
            plan = plan_capture(transcript, options, runtime.providers, Spend.from_json(state.llm_spent()))
            counts: dict = {}
            if plan.skipped is None:
                result = apply_plan(plan, runtime.local_dispatcher(project=plan.project), options)
                counts = {**result.facts, "page": result.page}
        finally:
            runtime.close()
        if plan.llm is not None:
            counts["llm"] = {"code": plan.llm.code, "proposed": plan.llm.proposed, "kept": plan.llm.kept, **plan.llm.spent.as_json()}
        state.save(str(path), stamp, counts, plan.llm.spent.as_json() if plan.llm else None)
        return plan.skipped or "ok", counts


def log_capture(home: Home, harness: str, session: str, event: str, code: str, counts: dict, started: float) -> None:
    """One line per capture: `memverbs doctor` and the tests read it."""
    line = json.dumps({
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "harness": harness[:20],
        "session": session[:8],
        "event": event[:40],
        "code": code,
        "counts": counts,
        "ms": round((time.monotonic() - started) * 1000),
    })
    try:
        home.logs.mkdir(parents=True, exist_ok=True)
        fd = os.open(home.logs / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass
