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
import sys
import time

from memverbs.hooks.adapters import ADAPTERS
from memverbs.hooks.basics import reflex_on
from memverbs.hooks.events import Harness, HookError, HookFailure, HookInputError, Moment
from memverbs.hooks.fastpath import (
    DEFAULT_DEADLINE_MS,
    HOOK_OPTIONS,
    MAX_DEADLINE_MS,
    config_tables,
    emit,
    hooks_off,
    log_line,
    parse_args,
    read_raw_stdin,
)
from memverbs.server.home import Home

try:  # the C module `signal` wraps: the wrapper builds enums of every signal, half a millisecond of each hook
    import _signal as signal  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    import signal

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.remote import RemoteHook
    from memverbs.hooks.state import SessionState
    from memverbs.server.brain.location import BrainLocation
    from memverbs.server.quickconfig import QuickSettings
    from memverbs.server.verbs.pointers import BrainReads
    from memverbs.server.verbs.readout import Ask

__all__ = ["DEFAULT_DEADLINE_MS", "HOOK_OPTIONS", "MAX_DEADLINE_MS", "MOMENTS", "exit_now", "parse_args", "read_stdin",
           "run_hook"]

LOCK_MARGIN_MS = 100  # before the alarm: a lock wait ends in time to report and exit
EXIT_MARGIN_MS = 150  # before the deadline: the alarm, so its unwinding, the log line and the interpreter's exit fit
MOMENTS = (*(m.value for m in Moment), "auto")


class Deadline(BaseException):
    """The hook ran out of time; the session is not kept waiting.

    A BaseException, like KeyboardInterrupt, so no `except Exception` on the way (dispatch's
    boundary turns those into `internal`) can swallow it: a deadline is reported as a deadline.
    """


class Hook:
    """What a moment needs: the event, its session state, the brain, and a trusted local caller."""

    def __init__(
        self, home: Home, event: HookEvent, settings: QuickSettings, state: SessionState, now_ms: int, deadline: float
    ) -> None:
        from memverbs.server.brain.factory import locate, open_brain  # noqa: PLC0415
        from memverbs.server.dispatch import Dispatcher  # noqa: PLC0415
        from memverbs.server.projects import find_project  # noqa: PLC0415

        self.event, self.settings, self.state, self.now_ms = event, settings, state, now_ms
        # The repository the session runs in (the payload's cwd): its memory leads the pack.
        self.project = find_project(event.cwd)
        self.source = settings.source
        # Never wait on a lock past the deadline: SQLite's busy wait is C code the alarm cannot
        # interrupt, and the alarm would leave a Postgres connection mid-query. So every lock wait
        # (each write a verb may skip on a lock meets it again) gets what is left of the budget,
        # minus a margin to report and exit. One connection at most (a few calls in sequence).
        lock_deadline = deadline - LOCK_MARGIN_MS / 1000
        left_ms = int((lock_deadline - time.monotonic()) * 1000)
        busy_ms = max(10, min(settings.busy_timeout_ms, 1_000, left_ms))
        where = locate(settings.brain_url, home, settings.brain_path)
        if where.backend == "postgres":
            _quiet_driver()
        self.brain = open_brain(where, busy_timeout_ms=busy_ms, pool_size=1, deadline=lock_deadline)
        # The CLI's dispatcher (Runtime.local_dispatcher builds the same), on this one connection;
        # not through Runtime itself, which would add its settings and providers to every hook.
        self.dispatcher = Dispatcher.local(self.source, lambda: self.brain, "verbs", project=self.project)

    # a `readout.Side`: the local brain through the dispatcher, whose verbs read the moment's `Ask`
    in_process = True

    def own_project(self) -> None:
        return None  # the verbs read the project's slug from the brain's registry themselves

    def reads(self) -> BrainReads:
        from memverbs.server.verbs.pointers import BrainReads  # noqa: PLC0415 - a heartbeat with a prompt only

        return BrainReads(self.brain)

    def call(self, verb: str, params: dict, ask: Ask | None = None) -> tuple[dict, dict]:
        """A verb's body, and what it said beside it for the moment's `ask` (server/verbs/readout.py)."""
        outcome = self.dispatcher.call(verb, params, extras={"ask": ask} if ask is not None else None)
        if outcome.cause is not None:
            raise outcome.cause  # a locked, missing or corrupt brain is classified by its type
        if outcome.is_error:
            raise HookFailure(outcome.body.get("error", "error"))
        return outcome.body, outcome.aside

    def close(self) -> None:
        self.brain.close()



def _quiet_driver() -> None:
    """Keep psycopg's own log lines (a rollback it could not send, a connection the pool discards
    when a deadline cut a call short) off stderr, which some harnesses show the user. Without a
    handler of its own, Python's last-resort handler would print them; what happened is the
    hooks log's code."""
    import logging  # noqa: PLC0415 - psycopg imports it anyway; a SQLite hook never pays for it

    driver = logging.getLogger("psycopg")  # psycopg's and psycopg_pool's ("psycopg.pool") loggers
    driver.addHandler(logging.NullHandler())
    driver.propagate = False


def _local_brain(home: Home, settings: QuickSettings) -> BrainLocation | None:
    """Where the configured brain lives, for the heartbeat's one-read change check (a SQLite file, or
    a Postgres URL: server/brain/plain.py has a twin for each); None for a bad brain.url, which the full
    path reports, classified."""
    from memverbs.server.brain.factory import locate  # noqa: PLC0415
    from memverbs.server.errors import ConfigError  # noqa: PLC0415

    try:
        return locate(settings.brain_url, home, settings.brain_path)
    except ConfigError:
        return None


def _unchanged(home: Home, where: BrainLocation, settings: QuickSettings, event: HookEvent, state: SessionState,
               repeat: bool) -> tuple[bool, str | None]:
    """Whether nothing changed since the session's cursor (one indexed read on a plain connection), and
    if so, the moment's whole answer when that connection can give it: "" for silence, or a prompt's
    pointers (hooks/reflex.py); None when the full path must still run (Grok's pointers waiting for
    this PostToolUse, or a repeated session start)."""
    from memverbs.server.brain.plain import open_plain  # noqa: PLC0415
    from memverbs.server.context import LOCAL_LANE  # noqa: PLC0415

    plain = open_plain(where)
    if plain is None:
        return False, None
    try:
        if plain.changed(settings.source, LOCAL_LANE, event.session_id) is not False:
            return False, None
        if repeat:
            return True, None
        if event.moment is Moment.POST_TOOL:
            if state.pending and reflex_on(settings.hook_reflex):
                return True, None
            state.last_heartbeat_ms = _now_ms()
            state.save()
            return True, ""
        if not event.prompt or not reflex_on(settings.hook_reflex):
            return True, ""
        from memverbs.hooks.reflex import answer  # noqa: PLC0415

        return True, answer(plain, home.dir, event.harness.value, event.session_id,
                            settings.source, event.prompt)
    finally:
        plain.close()


def read_stdin(deadline: float, raw: bytes | None = None) -> dict:
    """The payload: read now within `deadline`, or the bytes the launcher's fast path already read."""
    raw = read_raw_stdin(deadline) if raw is None else raw
    if not raw:
        return {}
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookInputError("stdin is not JSON") from exc
    if not isinstance(payload, dict):
        raise HookInputError("stdin is not a JSON object")
    return payload


def run_hook(argv: list[str], started: float | None = None, stdin: bytes | None = None, changed: bool = False) -> int:
    """`started`, `stdin` and `changed`: the launcher's clock, what its fast path read, and whether the
    fast path's change check already found something new (hooks/fastpath.py)."""
    started = time.monotonic() if started is None else started
    if hooks_off():
        _tell_person("off")
        return 0
    if argv[:1] == [Moment.CAPTURE.value]:
        from memverbs.hooks.capture import run_capture_hook  # noqa: PLC0415

        return run_capture_hook(argv, started, stdin)
    home = Home.from_env()
    args = parse_args(argv)
    try:
        deadline_ms = min(MAX_DEADLINE_MS, max(50, int(args["deadline_ms"])))
    except (TypeError, ValueError, OverflowError):
        deadline_ms = DEFAULT_DEADLINE_MS
    code, output, harness, moment = "internal", None, str(args["harness"]), str(args["moment"])
    detail: str | None = None
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        try:
            # What is left of the budget: the process's start and the launcher's fast path have spent
            # some of it, and the exit needs the last EXIT_MARGIN_MS (never below a tenth of it).
            budget_s = max(deadline_ms * 0.9, deadline_ms - EXIT_MARGIN_MS) / 1000
            signal.setitimer(signal.ITIMER_REAL, max(0.001, budget_s - (time.monotonic() - started)))
            code, output, moment = _run(home, args, started, budget_s, stdin, changed)
        finally:
            # Inside the handlers below, so an alarm landing just as the work ends is still caught.
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Deadline:
        code, output = "deadline", None
    except HookError as exc:
        code = exc.code
        detail = exc.message if isinstance(exc, HookInputError) else None
    except BaseException as exc:  # noqa: BLE001 - the fail-open boundary: nothing may break the session
        code = _classify(exc)
    finally:
        signal.signal(signal.SIGALRM, previous)
    if output:
        code = code if emit(output) else "stdout_closed"
    else:
        _tell_person(code, detail)
    _diagnose(home, harness, moment, code, started, len(output or ""))
    return 0


def exit_now(code: int) -> NoReturn:
    """End a hook process without tearing the interpreter down. Everything a hook says is written
    already (its answer and log line with os.write, its state file closed, its brain closed), and
    the teardown of the modules it imported took 0.2–0.7 s on a loaded machine (psycopg's most):
    past the deadline the harness is waiting on. For the hook's own process only (its entry points)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing left to say
            pass
    os._exit(code)


def _tell_person(code: str, detail: str | None = None) -> None:
    """At a terminal, say on stderr why the hook printed nothing. A harness pipes stderr (and shows
    some of it to the user), so it still gets silence; and nothing here may fail the hook."""
    try:
        if sys.stderr is None or not sys.stderr.isatty():
            return
        from memverbs.hooks.explain import why  # noqa: PLC0415 - a person at a terminal only

        os.write(2, f"memverbs hook: {why(code, detail)}\n".encode())
    except Exception:  # noqa: BLE001 - the fail-open boundary: telling a person must not break the hook
        pass


def _run(
    home: Home, args: dict, started: float, budget_s: float, stdin: bytes | None, changed: bool
) -> tuple[str, str | None, str]:
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
    event = adapter.parse(read_stdin(started + budget_s * 0.4, stdin), moment, args["session_id"])

    from memverbs.hooks.remote import remote_url  # noqa: PLC0415
    from memverbs.hooks.state import SessionState  # noqa: PLC0415
    from memverbs.server.quickconfig import quick_settings  # noqa: PLC0415

    # config.toml through the fast path's parsed-once copy: no TOML parser on a hook's path.
    settings = quick_settings(home, lambda: config_tables(home.dir))
    url = remote_url(home, event.harness.value)  # a harness wired to a remote brain: its hooks follow it
    state = SessionState.load(os.path.join(home.dir, "hooks", "sessions"), event.harness, event.session_id)
    if event.moment is Moment.POST_TOOL:
        from memverbs.hooks.heartbeat import tool_beat_due  # noqa: PLC0415

        if state.packed and not tool_beat_due(state, _now_ms()):
            return "rate_limited", None, event.moment.value  # a tool-heavy turn: one look per interval
    beats = event.moment is Moment.HEARTBEAT or (event.moment is Moment.POST_TOOL and state.packed)
    # A session announced twice (OpenClaw's Gateway) gets its pack again, unbuilt, while nothing has
    # changed since: a change means a fresh pack (a harness that runs each turn as a new process
    # restarts the session every turn, and its plugin skips the heartbeat after a fresh pack).
    repeat = state.recent_pack(_now_ms()) if event.moment is Moment.SESSION_START else None
    # A heartbeat the fast path found changed goes straight to delta (asking again would only cost a
    # second connection); a wrong "changed" would cost a delta that delivers nothing, never a change.
    check = (beats and not (changed and event.moment is Moment.HEARTBEAT)) or repeat is not None
    where = _local_brain(home, settings) if check and url is None else None
    unchanged = False
    if where is not None:
        unchanged, answered = _unchanged(home, where, settings, event, state, repeat is not None)
        if unchanged:
            if repeat is not None:
                return "repeat_start", adapter.render(repeat, event), event.moment.value
            if answered is not None:  # a few indexed reads on a plain connection; the brain is not even opened
                return ("reflex" if answered else "unchanged"), answered or None, event.moment.value

    hook: Hook | RemoteHook
    if url is not None:
        from memverbs.hooks.remote import RemoteHook  # noqa: PLC0415

        hook = RemoteHook(url, event, settings, state, _now_ms(), started + budget_s)
    else:
        hook = Hook(home, event, settings, state, _now_ms(), started + budget_s)
    try:
        if beats:
            from memverbs.hooks.heartbeat import heartbeat  # noqa: PLC0415

            text = heartbeat(hook, changed=not unchanged)
        else:
            from memverbs.hooks.session_start import rehydrate  # noqa: PLC0415

            text = rehydrate(hook, adapter)
        hook.state.save()
    finally:
        hook.close()
    if not text:
        return ("unchanged" if unchanged else "empty"), None, event.moment.value
    return "ok", adapter.render(text, event), event.moment.value


def _now_ms() -> int:
    return time.time_ns() // 1_000_000  # timeparse's clock, without its imports on the cheap path


def _on_alarm(signum: int, frame: FrameType | None) -> NoReturn:
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
    log_line(home.dir, harness, moment, code, started, chars)
