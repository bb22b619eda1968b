"""`memverbs serve` over stdio: the harness spawns it and speaks MCP on its pipes.

stdout is the protocol; the banner and any diagnostics go to stderr. The wire
is memverbs's own (wire.py): the reader thread answers `initialize`, `ping`
and `tools/list` itself, at once, and queues `tools/call` for one worker
thread — the process has one SQLite connection, so calls run one at a time, in
order, and a slow provider call never stalls a ping. A `notifications/cancelled`
drops a queued call and silences a running one (SQLite work cannot be
interrupted halfway; its reply is simply not sent, as the spec asks). A client
that offers MCP roots is asked for them, and the calls run in the project they
name (roots.py).

The official SDK is imported only if a client opens the connection in the
2026-07-28 era (a per-request `_meta` envelope instead of `initialize`): it
negotiates that era, and serves the rest of that connection.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from memverbs.server.context import Caller
from memverbs.server.dispatch import Dispatcher, Outcome
from memverbs.server.errors import MemverbsError
from memverbs.server.projects import Project, find_project
from memverbs.server.protocol.surfaces import allowed, tool_defs
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms
from memverbs.server.transport import wire
from memverbs.server.transport.diagnostics import say
from memverbs.server.transport.encoding import encode

if TYPE_CHECKING:
    from memverbs.server.transport.roots import Roots

INTERNAL_ERROR = -32603
# The notifications after which a client that offers roots is asked for them (transport/roots.py).
ROOTS_CUES = frozenset({"notifications/initialized", "notifications/roots/list_changed"})


class ProtocolOut:
    """stdout reserved for the protocol: fd 1 is pointed at stderr so a stray print cannot corrupt it."""

    def __init__(self, fd: int | None = None) -> None:
        if fd is None:
            sys.stdout.flush()
            fd = os.dup(1)
            os.dup2(2, 1)
        self.fd = fd
        self.lock = threading.Lock()
        self.gone = False  # the client closed its end: nothing more can reach it

    def write(self, data: bytes) -> None:
        with self.lock:
            if self.gone:
                return
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view) :]
            except OSError:  # EPIPE: the client left; calls already queued still run (their writes land)
                self.gone = True


class Calls(threading.Thread):
    """The one worker that runs tool calls, in arrival order, on the connection's one brain."""

    def __init__(self, dispatcher: Dispatcher, out: ProtocolOut, after_first: Callable[[], None] | None = None) -> None:
        super().__init__(name="memverbs-calls", daemon=True)
        self.dispatcher = dispatcher
        self.out = out
        self.after_first = after_first  # run once, on this thread, after the first reply is out
        self.roots: Roots | None = None  # the client's MCP roots, once it offers them: the calls' project
        self.queue: queue.SimpleQueue[wire.Call | None] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.pending: dict[Any, bool] = {}  # id -> cancelled, for calls queued or running

    def submit(self, call: wire.Call) -> None:
        with self.lock:
            self.pending[_key(call.msg_id)] = False
        self.queue.put(call)

    def cancel(self, msg_id: Any) -> None:
        with self.lock:
            if _key(msg_id) in self.pending:
                self.pending[_key(msg_id)] = True

    def finish(self) -> None:
        """Run what is queued, then stop: a write the client sent is not lost because it hung up."""
        self.queue.put(None)
        self.join()

    def run(self) -> None:
        while (call := self.queue.get()) is not None:
            if self._cancelled(call, done=False):
                continue
            if self.roots is not None:
                self._follow_roots(self.roots.current())
            try:
                data = wire.reply(call.msg_id, encode(self.dispatcher.call(call.name, call.arguments)))
            except Exception as exc:  # noqa: BLE001 - the dispatcher catches verb failures; this is the wire's last guard
                say(f"memverbs: internal error answering tools/call: {exc!r}")
                data = wire.error(call.msg_id, INTERNAL_ERROR, "Internal error")
            if not self._cancelled(call, done=True):
                self.out.write(data)
            if self.after_first is not None:
                after, self.after_first = self.after_first, None
                after()

    def _follow_roots(self, project: Project | None) -> None:
        """Point the connection's caller at the roots' project (set here, between calls, on this thread)."""
        caller = self.dispatcher.caller
        if project != caller.project:
            self.dispatcher.caller = Caller(remote=caller.remote, client_id=caller.client_id,
                                            source_id=caller.source_id, scopes=caller.scopes, project=project,
                                            person=caller.person)

    def _cancelled(self, call: wire.Call, *, done: bool) -> bool:
        with self.lock:
            cancelled = self.pending.get(_key(call.msg_id), False)
            if done or cancelled:
                self.pending.pop(_key(call.msg_id), None)
            return cancelled


def _key(msg_id: Any) -> tuple[type, Any]:
    return (type(msg_id), msg_id)  # 1 and "1" are different requests


def read_frames(stdin: BinaryIO) -> Iterator[bytes | None]:
    """The lines of `stdin`, each at most MAX_FRAME_BYTES; a longer one is drained and yielded as None."""
    limit = wire.MAX_FRAME_BYTES + 1
    while True:
        raw = stdin.readline(limit)
        if not raw:
            return
        if len(raw) == limit and not raw.endswith(b"\n"):
            while (rest := stdin.readline(limit)) and not rest.endswith(b"\n"):
                pass
            yield None
            continue
        yield raw


def serve_connection(
    dispatcher: Dispatcher, stdin: BinaryIO, out: ProtocolOut, after_first_call: Callable[[], None] | None = None
) -> None:
    """Answer one client until it closes stdin; `after_first_call` runs on the call thread after the first reply."""
    session = wire.Session(tool_defs(dispatcher.surface))
    calls = Calls(dispatcher, out, after_first_call)
    calls.start()
    frames = read_frames(stdin)
    try:
        for raw in frames:
            if out.gone:
                break
            if raw is None:
                out.write(wire.error(None, wire.INVALID_REQUEST, "Invalid Request",
                                     f"message larger than {wire.MAX_FRAME_BYTES} bytes"))
                continue
            if not raw.strip():
                continue
            try:
                msg = wire.parse(raw)
            except wire.FrameError as exc:
                out.write(wire.error(exc.msg_id, exc.code, exc.message, exc.data))
                continue
            if session.opens_modern(msg):
                calls.finish()
                _hand_to_sdk(dispatcher, [raw], frames, out)
                return
            if msg.get("method") == "notifications/cancelled" and "id" not in msg:
                calls.cancel(wire.cancelled_id(msg))
                continue
            if msg.get("method") in ROOTS_CUES and "id" not in msg:
                if session.client_roots and session.version is not None:
                    if calls.roots is None:  # set before the request goes out: the calls after it wait for it
                        from memverbs.server.transport.roots import Roots  # noqa: PLC0415 - paid only by a client with roots

                        calls.roots = Roots(dispatcher.caller.project)
                    out.write(calls.roots.ask())
                continue
            if calls.roots is not None and calls.roots.take(msg):
                continue
            try:
                answer = session.handle(msg)
            except Exception as exc:  # noqa: BLE001 - a bug in one answer must not end the connection
                say(f"memverbs: internal error answering {msg.get('method')!r}: {exc!r}")
                answer = wire.error(msg.get("id"), INTERNAL_ERROR, "Internal error") if "id" in msg else None
            if isinstance(answer, wire.Call):
                calls.submit(answer)
            elif answer is not None:
                out.write(answer)
    finally:
        if calls.is_alive():
            calls.finish()


def _hand_to_sdk(dispatcher: Dispatcher, first: list[bytes], rest: Iterator[bytes | None], out: ProtocolOut) -> None:
    """Serve a 2026-07-28-era connection with the SDK, starting from the request that opened it."""
    import anyio  # noqa: PLC0415 - the slow imports, paid only by clients of that era
    import anyio.to_thread  # noqa: PLC0415
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    from memverbs.server.transport.mcp_server import build_server  # noqa: PLC0415

    class Lines:
        def __init__(self) -> None:
            self.first = list(first)

        def __aiter__(self) -> Lines:
            return self

        async def __anext__(self) -> str:
            if self.first:
                return self.first.pop(0).decode("utf-8", errors="replace")
            raw = await anyio.to_thread.run_sync(lambda: next(rest, StopIteration), abandon_on_cancel=True)
            if raw is StopIteration:
                raise StopAsyncIteration
            return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else "\n"  # None: an oversize frame

    class Writer:
        async def write(self, text: str) -> None:
            out.write(text.encode("utf-8", errors="backslashreplace"))

        async def flush(self) -> None:
            return None

    limiter = anyio.CapacityLimiter(1)

    async def offload(thunk: Callable[[], Outcome]) -> Outcome:
        return await anyio.to_thread.run_sync(thunk, limiter=limiter)

    server = build_server(lambda ctx: dispatcher, offload=offload)

    async def main() -> None:
        # The SDK reads and writes through these two as it would through anyio's file wrappers (async
        # iteration, write, flush); its stubs name the wrapper class itself.
        async with stdio_server(stdin=Lines(), stdout=Writer()) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def serve_stdio(runtime: Runtime, surface: str, stdin: BinaryIO | None = None) -> None:
    out = ProtocolOut()
    # A harness starts its stdio server in the session's directory: what its agent remembers belongs
    # to that directory's project (server/projects.py), read once from the files, no git run, unless
    # the client's MCP roots name another (roots.py).
    dispatcher = runtime.mcp_dispatcher(surface, Caller.mcp(runtime.source, project=find_project(os.getcwd())))
    count = len(allowed(surface))
    what = f"{count} memory verbs" if surface == "verbs" else f"{count} tools ({surface} surface)"
    say(f"Starting memverbs MCP server (stdio) — serving {what} (MEMORY_VERBS v1)...")
    if runtime.config_error is not None:
        say(f"memverbs: {runtime.config_error.message} — {runtime.config_error.fix}")
    try:
        runtime.brain().gc_cursors(now_ms())  # idle delta cursors, once per boot
    except MemverbsError as exc:
        say(f"memverbs: {exc.message} — {exc.fix}")
    try:
        # The full settings are checked once the first tool result is out, not before it.
        serve_connection(dispatcher, stdin or sys.stdin.buffer, out, after_first_call=runtime.validate_settings)
    except KeyboardInterrupt:
        pass
    finally:
        runtime.close()
