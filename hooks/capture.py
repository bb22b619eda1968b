"""`memverbs hook capture`: hand the session's transcript to a detached worker and return at once.

Harnesses run this at the end of a session and before a compaction (Claude Code, Codex and Grok:
`SessionEnd`, `Stop`, `PreCompact`, each with the payload's `transcript_path`; the OpenClaw and
opencode plugins send the session id, and OpenClaw's `sessionFile` when it has one). The session
must not wait for capture, so the hook only decides whether there is anything to do — the kill
switch, `capture.enabled`, a payload with a session id, `Stop` at most every STOP_INTERVAL_S
per session — and forks the worker (`spawn_worker`), out of the hook's process group and holding
none of the harness's descriptors (a harness reading the hook's stdout sees EOF when the hook
exits, not when the worker does), which lowers its priority, caps its own CPU time, memory and
wall clock, and runs server/capture/worker.py (which logs reaching a limit as `stopped_<limit>`,
and leaves a checkpoint the session's next capture resumes from). The hook waits for no other process, reads no
transcript, and parses config.toml only when it mentions capture. It prints nothing and exits 0
whatever happens.

Only `os`, `json`, `time`, hooks/fastpath.py and server/capture/paths.py are imported here: the engine (transcript readers,
the secret detector, the dispatcher) is imported by the worker alone.
"""

from __future__ import annotations

import json
import os
import time

from memverbs.hooks.fastpath import config_tables, deadline_s, hooks_off, log_line, parse_args, read_raw_stdin
from memverbs.server.capture.paths import state_file

STOP_INTERVAL_S = 300  # `Stop` fires after every turn: capture a live session at most this often
TURN_END_EVENTS = {"stop", "session.idle"}  # each turn's end (opencode has no session end: session.idle is its Stop)
WORKER_WALL_S = 120  # the worker is killed by its own alarm after this long
WORKER_CPU_S = 60
WORKER_MEMORY_BYTES = 1 << 30  # address space: well above the worker's ~100 MB, far below a runaway's


def capture_enabled(root: str) -> bool:
    """`capture.enabled` (environment over config.toml, as every setting), read without pydantic."""
    env = os.environ.get("MEMVERBS_CAPTURE__ENABLED")
    if env is not None:
        return env.strip().lower() not in {"false", "0", "no", "off"}
    try:
        with open(os.path.join(root, "config.toml"), "rb") as fh:
            if b"capture" not in fh.read():
                return True  # the common file: nothing to parse (a TOML parse costs the hook ~25 ms)
        section = config_tables(root).get("capture")
    except Exception:  # noqa: BLE001 - an unreadable config is the worker's to report; never the session's
        return True
    return not (isinstance(section, dict) and section.get("enabled") is False)


def run_capture_hook(argv: list[str], started: float, stdin: bytes | None = None) -> int:
    """The hook. Always 0; one line in the hooks log with what it decided."""
    args = parse_args(argv)
    harness = str(args["harness"])[:20]
    root = os.environ.get("MEMVERBS_HOME", "").strip()
    root = os.path.expanduser(root) if root else os.path.join(os.path.expanduser("~"), ".memverbs")
    code = "internal"
    try:
        code = _decide_and_spawn(args, harness, root, started, stdin)
    except Exception as exc:  # noqa: BLE001 - the fail-open boundary: nothing may break the session
        code = f"internal_{type(exc).__name__}"
    log_line(root, harness, "capture", code, started, 0)
    return 0


def _decide_and_spawn(args: dict, harness: str, root: str, started: float, stdin: bytes | None) -> str:
    if hooks_off():
        return "off"
    raw = read_raw_stdin(started + deadline_s(args) * 0.4) if stdin is None else stdin
    try:
        payload = json.loads(raw) if raw else {}
    except ValueError:
        return "bad_input"
    if not isinstance(payload, dict):
        return "bad_input"
    session = args["session_id"] or _first(payload, "session_id", "sessionId", "sessionID")
    if not session:
        return "bad_input"
    if harness == "claude" and "workspaceRoot" in payload and "hookEventName" in payload:
        # Grok runs Claude Code's settings hooks too, with its own payload (camelCase twins beside the
        # snake_case fields): that session and its transcript are Grok's.
        harness = "grok"
    if not os.path.isdir(root):
        return "no_brain"  # never create a home as a side effect of a hook
    if not capture_enabled(root):
        return "capture_off"
    event = _first(payload, "hook_event_name", "hookEventName", "event") or ""
    if event.lower() in TURN_END_EVENTS:
        try:
            if time.time() - os.stat(state_file(root, harness, session)).st_mtime < STOP_INTERVAL_S:
                return "rate_limited"  # the session end (or the next Stop past the interval) captures the rest
        except OSError:
            pass
    job = {
        "harness": harness,
        "session_id": session[:200],
        "transcript_path": _first(payload, "transcript_path", "transcriptPath"),
        "cwd": _first(payload, "cwd", "workspaceRoot"),
        "event": event[:40],
        "home": root,
    }
    return spawn_worker(job)


def spawn_worker(job: dict) -> str:
    """Fork the detached worker and return: nothing here waits for another process to be scheduled.

    First the hook lets go of the harness's descriptors: its stdin, stdout and stderr become
    /dev/null (it prints nothing, and has read its payload) and any other descriptor it was handed
    (an inheritable one: Python's own never are) is closed, so the worker holds no pipe of the
    harness's and the harness sees EOF now, not when the worker ends. Then one fork. The worker
    leaves the hook's process group before the hook can exit: the hook moves it (`setpgid`), or the
    worker got there first with `setsid` (a session of its own) — either way a harness that kills
    its hook's process group does not reach it. The worker is not waited for: when the hook exits
    it is re-parented, and reaped when it ends.
    """
    _release_descriptors()
    try:
        pid = os.fork()
    except OSError:
        return "spawn_failed"
    if pid == 0:
        worker_main(job)  # never returns
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the worker's setsid came first: it is out of the group already
    return "spawned"


def _release_descriptors() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: the worker closes every descriptor above stderr itself, first thing
        return
    for fd in fds:
        try:
            if fd > 2 and os.get_inheritable(fd):
                os.close(fd)
        except OSError:
            pass  # the listing's own descriptor, closed by now


def worker_main(job: dict) -> None:
    """The forked worker: out of the hook's process group, bounded, run the engine, exit."""
    code = 0
    try:
        os.nice(10)  # first: the hook it was forked from still has to exit, on the same cores
        import signal  # noqa: PLC0415 - the worker's only

        try:
            os.setsid()
        except OSError:  # the hook made it a process group's leader first: still in the harness's session, deaf to its hangup
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        os.closerange(3, 65536)  # nothing of the harness's, or the hook's, stays open
        import resource  # noqa: PLC0415

        resource.setrlimit(resource.RLIMIT_CPU, (WORKER_CPU_S, WORKER_CPU_S + 5))
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(WORKER_WALL_S)
        from memverbs.server.capture.worker import run_job  # noqa: PLC0415

        run_job(job, limited=True)  # reaching a limit is logged (stopped_*), and the next capture resumes
    except BaseException:  # noqa: BLE001 - a detached process with nowhere to report: it logs inside run_job
        code = 1
    finally:
        os._exit(code)


def _first(payload: dict, *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
