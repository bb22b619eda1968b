"""`memverbs hook <moment>`: the one fail-open wrapper around every lifecycle hook.

A hook runs inside someone's agent session. Whatever happens here — no brain, a
locked or corrupt database, garbage on stdin, an unknown harness, a bug, a slow
disk — the session must go on: the hook exits 0, prints nothing unless it has a
whole answer, and finishes inside its deadline (an interval timer raises in the
main thread when it runs out). What happened is recorded as a code in
`$MEMVERBS_HOME/logs/hooks.jsonl` — never fact text. `MEMVERBS_HOOKS=off`
turns every hook into a no-op. The wrapper in run_hook is the hooks' one broad
`except` (writing the answer to a closed stdout is guarded the same way).

    memverbs hook MOMENT --harness NAME [--session-id ID] [--deadline-ms N]

MOMENT is one of MOMENTS, NAME a hooks/events.Harness (its adapter in adapters.py).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

from memverbs.hooks.adapters import ADAPTERS
from memverbs.hooks.events import Harness, HookError, HookFailure, HookInputError, Moment
from memverbs.server.home import Home

DEFAULT_DEADLINE_MS = 2_500  # well inside the 5–10 s timeouts the installers set
MAX_DEADLINE_MS = 60_000
MAX_STDIN = 1 << 20
LOCK_MARGIN_MS = 100
OFF = {"off", "0", "false", "no", "disabled"}
MOMENTS = (*(m.value for m in Moment), "auto")
# The runner's arguments (flag, metavar, help): parse_args reads them, and so does the CLI's
# parser, which only lists and documents `memverbs hook` (docs/cli.md).
HOOK_OPTIONS = (
    ("--harness", "HARNESS", "the harness running the hook (its payload and output format)"),
    ("--session-id", "ID", "the session id, when the harness does not send one"),
    ("--deadline-ms", "MS", "give up and print nothing after this long"),
)
DEFAULTS = {"moment": None, "harness": Harness.PLAIN.value, "session_id": None, "deadline_ms": DEFAULT_DEADLINE_MS}


class Deadline(BaseException):
    """The hook ran out of time; the session is not kept waiting.

    A BaseException, like KeyboardInterrupt, so no `except Exception` on the way (dispatch's
    boundary turns those into `internal`) can swallow it: a deadline is reported as a deadline.
    """


class Hook:
    """What a moment needs: the event, its session state, the brain, and a trusted local caller."""

    def __init__(self, home: Home, event, settings, state, now_ms: int, deadline: float) -> None:
        from memverbs.server.brain.factory import locate, open_brain  # noqa: PLC0415
        from memverbs.server.dispatch import Dispatcher  # noqa: PLC0415

        self.event, self.settings, self.state, self.now_ms = event, settings, state, now_ms
        self.source = settings.source
        # Never wait on a lock past the deadline: SQLite's busy wait is C code the alarm cannot
        # interrupt, so it gets what is left of the budget (minus a margin to report and exit).
        # One connection at most (a hook makes a few calls in sequence).
        left_ms = int((deadline - time.monotonic()) * 1000) - LOCK_MARGIN_MS
        busy_ms = max(10, min(settings.busy_timeout_ms, 1_000, left_ms))
        where = locate(settings.brain_url, home, settings.brain_path)
        self.brain = open_brain(where, busy_timeout_ms=busy_ms, pool_size=1)
        # The CLI's dispatcher (Runtime.local_dispatcher builds the same), on this one connection;
        # not through Runtime itself, which would add its settings and providers to every hook.
        self.dispatcher = Dispatcher.local(self.source, lambda: self.brain, "verbs")

    def standing(self) -> list[str]:
        from memverbs.hooks.standing import local_standing  # noqa: PLC0415

        return local_standing(self.brain, self.source, self.settings.hook_entities, self.state.entities)

    def has_cursor(self) -> bool:
        from memverbs.server.context import LOCAL_LANE  # noqa: PLC0415

        return self.brain.cursor(self.source, LOCAL_LANE, self.event.session_id) is not None

    def page_stamps(self, cards: list[dict]) -> list[dict]:
        """The cards' pages with their times, so a heartbeat does not repeat a page the pack just showed."""
        from memverbs.server.timeparse import iso  # noqa: PLC0415

        shown = self.brain.pages_by_slugs(self.source, [c["slug"] for c in cards], allow_private=False)
        return [{"slug": slug, "updated_at": iso(row["updated_at"])} for slug, row in shown.items()]

    def call(self, verb: str, params: dict) -> dict:
        outcome = self.dispatcher.call(verb, params)
        if outcome.cause is not None:
            raise outcome.cause  # a locked, missing or corrupt brain is classified by its type
        if outcome.is_error:
            raise HookFailure(outcome.body.get("error", "error"))
        return outcome.body

    def close(self) -> None:
        self.brain.close()



def _sqlite_brain(home: Home, settings):
    """The brain's file when it is a SQLite brain (the heartbeat's one-read fast path reads the file
    itself); None for a Postgres brain, which answers through the full delta, or a bad brain.url."""
    from memverbs.server.brain.factory import locate  # noqa: PLC0415
    from memverbs.server.errors import ConfigError  # noqa: PLC0415

    try:
        where = locate(settings.brain_url, home, settings.brain_path)
    except ConfigError:
        return None  # the full path reports it, classified
    return where.path if where.backend == "sqlite" else None

def parse_args(argv: list[str]) -> dict:
    """The moment and HOOK_OPTIONS, leniently: an unknown flag is ignored, never an error (a hook
    must not fail on a newer installer's command line)."""
    known = {flag.lstrip("-").replace("-", "_") for flag, _, _ in HOOK_OPTIONS}
    args = dict(DEFAULTS)
    rest = list(argv)
    if rest and not rest[0].startswith("--"):
        args["moment"] = rest.pop(0)
    while rest:
        flag = rest.pop(0)
        value = rest.pop(0) if rest and "=" not in flag else None
        if "=" in flag:
            flag, value = flag.split("=", 1)
        key = flag.lstrip("-").replace("-", "_")
        if key in known and value is not None:
            args[key] = value
    return args


def read_stdin(deadline: float) -> dict:
    if sys.stdin is None or sys.stdin.closed or sys.stdin.isatty():
        return {}
    chunks: list[bytes] = []
    size = 0
    fd = sys.stdin.fileno()
    while size < MAX_STDIN:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    raw = b"".join(chunks).strip()
    if not raw:
        return {}
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookInputError("stdin is not JSON") from exc
    if not isinstance(payload, dict):
        raise HookInputError("stdin is not a JSON object")
    return payload


def run_hook(argv: list[str]) -> int:
    started = time.monotonic()
    if os.environ.get("MEMVERBS_HOOKS", "").strip().lower() in OFF:
        return 0
    home = Home.from_env()
    args = parse_args(argv)
    try:
        deadline_ms = min(MAX_DEADLINE_MS, max(50, int(args["deadline_ms"])))
    except (TypeError, ValueError, OverflowError):
        deadline_ms = DEFAULT_DEADLINE_MS
    code, output, harness, moment = "internal", None, str(args["harness"]), str(args["moment"])
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, deadline_ms / 1000)
            code, output, moment = _run(home, args, started, deadline_ms / 1000)
        finally:
            # Inside the handlers below, so an alarm landing just as the work ends is still caught.
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Deadline:
        code, output = "deadline", None
    except HookError as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - the fail-open boundary: nothing may break the session
        code = _classify(exc)
    finally:
        signal.signal(signal.SIGALRM, previous)
    if output:
        code = _emit(output, code)
    _diagnose(home, harness, moment, code, started, len(output or ""))
    return 0


def _run(home: Home, args: dict, started: float, budget_s: float) -> tuple[str, str | None, str]:
    try:
        harness = Harness(args["harness"])
    except ValueError:
        return "unknown_harness", None, str(args["moment"])
    moment = None
    if args["moment"] not in (None, "auto"):
        try:
            moment = Moment(args["moment"])
        except ValueError:
            return "unknown_moment", None, str(args["moment"])
    adapter = ADAPTERS[harness]
    event = adapter.parse(read_stdin(started + budget_s * 0.4), moment, args["session_id"])

    from memverbs.hooks.remote import remote_url  # noqa: PLC0415
    from memverbs.hooks.state import SessionState  # noqa: PLC0415
    from memverbs.server.quickconfig import quick_settings  # noqa: PLC0415

    settings = quick_settings(home)
    url = remote_url(home, event.harness.value)  # a harness wired to a remote brain: its hooks follow it
    state = SessionState.load(home.root / "hooks" / "sessions", event.harness, event.session_id)
    if event.moment is Moment.POST_TOOL:
        from memverbs.hooks.heartbeat import tool_beat_due  # noqa: PLC0415

        if state.packed and not tool_beat_due(state, _now_ms()):
            return "rate_limited", None, event.moment.value  # a tool-heavy turn: one look per interval
    beats = event.moment is Moment.HEARTBEAT or (event.moment is Moment.POST_TOOL and state.packed)
    brain_file = _sqlite_brain(home, settings) if beats and url is None else None
    if brain_file is not None:
        from memverbs.hooks.changes import changed_since_cursor  # noqa: PLC0415
        from memverbs.server.context import LOCAL_LANE  # noqa: PLC0415

        if changed_since_cursor(brain_file, settings.source, LOCAL_LANE, event.session_id) is False:
            if event.moment is Moment.POST_TOOL:
                state.last_heartbeat_ms = _now_ms()
                state.save()
            return "unchanged", None, event.moment.value  # one indexed read; the brain is not even opened

    if url is not None:
        from memverbs.hooks.remote import RemoteHook  # noqa: PLC0415

        hook = RemoteHook(url, event, settings, state, _now_ms(), started + budget_s)
    else:
        hook = Hook(home, event, settings, state, _now_ms(), started + budget_s)
    try:
        if beats:
            from memverbs.hooks.heartbeat import heartbeat  # noqa: PLC0415

            text = heartbeat(hook)
        else:
            from memverbs.hooks.session_start import rehydrate  # noqa: PLC0415
            from memverbs.hooks.state import collect_idle  # noqa: PLC0415

            collect_idle(hook.state.path.parent)
            text = rehydrate(hook)
            # Where the harness drops start output (Grok), the pack waits for the first PostToolUse.
            hook.state.packed = event.moment is Moment.POST_TOOL or adapter.delivers_start
            if event.moment is Moment.POST_TOOL:
                hook.state.last_heartbeat_ms = hook.now_ms
        hook.state.save()
    finally:
        hook.close()
    if not text:
        return "empty", None, event.moment.value
    return "ok", adapter.render(text, event), event.moment.value


def _emit(output: str, code: str) -> str:
    """UTF-8 bytes straight to fd 1: no text-layer encoding to fail, and fine when sys.stdout is None."""
    data = (output + "\n").encode("utf-8")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
    except Exception:  # noqa: BLE001 - a closed or broken stdout must not break the session
        return "stdout_closed"
    return code


def _now_ms() -> int:
    return time.time_ns() // 1_000_000  # timeparse's clock, without its imports on the cheap path


def _on_alarm(signum, frame):
    raise Deadline()


def _classify(exc: BaseException) -> str:
    from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, BrainMissing, ConfigError  # noqa: PLC0415

    if isinstance(exc, BrainMissing):
        return "no_brain"
    if isinstance(exc, BrainLocked):
        return "brain_locked"
    if isinstance(exc, BrainCorrupt):
        return "brain_corrupt"
    if isinstance(exc, BrainError):
        return "brain_error"
    if isinstance(exc, ConfigError):
        return "config_error"
    return f"internal_{type(exc).__name__}"


def _diagnose(home: Home, harness: str, moment: str, code: str, started: float, chars: int) -> None:
    """One line per run, codes and sizes only: `memverbs doctor` reads it, nothing else does."""
    line = json.dumps(
        {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "harness": harness[:20],
            "moment": moment[:20],
            "code": code,
            "ms": round((time.monotonic() - started) * 1000),
            "chars": chars,
        }
    )
    if not home.root.is_dir():
        return  # never create a home as a side effect of a hook
    try:
        home.logs.mkdir(exist_ok=True)
        fd = os.open(home.hook_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass
