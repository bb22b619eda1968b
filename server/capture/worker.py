"""The detached capture worker: one session's transcript into the brain, then exit.

Started by hooks/capture.py in a process of its own (its CPU time, memory and wall clock are
capped there). It loads the full settings (off the hook's path, pydantic is fine here), finds
the transcript (the payload's `transcript_path`, else the harness's own store), skips it when
unchanged since its last capture, and captures it through the dispatcher as the trusted local
caller, with the optional LLM pass when `capture.llm` is on. What happened is one line in
`$MEMVERBS_HOME/logs/capture.jsonl`: codes and counts (the LLM pass's code, facts and spend,
transcript lines that could not be read), never text. Stopped by its own limits (CPU time, wall
clock, memory), it logs `stopped_cpu_limit`, `stopped_wall_limit` or `stopped_memory_limit` with
the position its checkpoint reached; the next capture of the session resumes from there.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, BrainMissing, ConfigError
from memverbs.server.home import REMOTE_RECEIPT, Home

LOG_NAME = "capture.jsonl"


class LimitReached(BaseException):
    """The worker's own limits stopped it (its CPU time, its wall clock). A BaseException, like the hook
    runner's Deadline, so no `except Exception` on the way can swallow it: the worker logs it and exits,
    and the session's checkpoint (resume.py) is where the next capture takes up."""

    def __init__(self, which: str) -> None:
        super().__init__(which)
        self.which = which


def run_job(job: dict, limited: bool = False) -> str:
    """Capture the job's session and log one line. `limited`: the process runs under the hook's limits
    (hooks/capture.py), and turns reaching them into a logged stop instead of a silent death."""
    started = time.monotonic()
    home = Home(Path(job["home"]))
    counts: dict = {}
    if limited:
        _stop_at_limits()
    try:
        code, counts = _run(home, job)
    except LimitReached as exc:
        code, counts = f"stopped_{exc.which}", _progress(home, job)
    except MemoryError:
        code, counts = "stopped_memory_limit", _progress(home, job)
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


def _stop_at_limits() -> None:
    """SIGXCPU (the soft CPU limit: the hard one kills 5 s later) and SIGALRM (the wall clock) raise
    LimitReached, once each: the log line and the exit fit in what is left."""
    import signal  # noqa: PLC0415

    def stop(which: str, signum: int) -> None:
        def handler(_signum: int, _frame: object) -> None:
            signal.signal(signum, signal.SIG_IGN)
            raise LimitReached(which)

        signal.signal(signum, handler)

    stop("cpu_limit", signal.SIGXCPU)
    stop("wall_limit", signal.SIGALRM)


def _progress(home: Home, job: dict) -> dict:
    """How far the stopped capture's checkpoint got: where the next one resumes (0: from the start)."""
    from memverbs.server.capture.resume import checkpoint_path  # noqa: PLC0415
    from memverbs.server.capture.state import SessionState  # noqa: PLC0415

    try:
        with open(checkpoint_path(SessionState(str(home.root), job["harness"], job["session_id"])), encoding="utf-8") as fh:
            position = json.load(fh).get("position", 0)
    except (OSError, ValueError, AttributeError, KeyError):
        position = 0
    return {"resume_at": position if isinstance(position, int) else 0}


def _run(home: Home, job: dict) -> tuple[str, dict]:
    from memverbs.server.capture.engine import capture_session  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions  # noqa: PLC0415
    from memverbs.server.capture.state import SessionState  # noqa: PLC0415
    from memverbs.server.capture.stores import find_session, is_subagent  # noqa: PLC0415
    from memverbs.server.capture.transcript import READERS  # noqa: PLC0415
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
        runtime = Runtime(home)
        try:
            plan, result = capture_session(runtime, state, str(path), harness if harness in READERS else None, session,
                                           CaptureOptions.from_settings(settings), job.get("cwd"))
        finally:
            runtime.close()
        counts: dict = {**result.facts, "page": result.page} if result is not None else {}
        if plan.skipped_lines:
            counts["skipped_lines"] = plan.skipped_lines
        if plan.llm is not None:
            counts["llm"] = {"code": plan.llm.code, "proposed": plan.llm.proposed, "kept": plan.llm.kept, **plan.llm.spent.as_json()}
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
