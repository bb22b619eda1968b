"""Dispatch: the one path every tool call takes, whatever the transport.

Order (PROTOCOL.md §2.5): surface gate and unknown names (byte-identical
`unknown_tool` envelopes), scope, optional-param normalisation, validation in
declaration order, unknown-param warnings or rejection, then the handler.
Errors are translated here, once: a VerbError is its envelope, a brain or
config failure is `unavailable` with the fix, anything else is `internal`
(logged to stderr with its traceback — stdout belongs to the protocol).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from memverbs.server.context import LOCAL_LANE, Caller, VerbContext
from memverbs.server.errors import (
    INTERNAL_SUGGESTION,
    PROTOCOL_VERSION,
    BrainError,
    ConfigError,
    MemverbsError,
    VerbError,
    invalid,
)
from memverbs.server.people import acting
from memverbs.server.protocol import params as pipeline
from memverbs.server.protocol.registry import BY_NAME, Operation
from memverbs.server.protocol.surfaces import allowed
from memverbs.server.record import Record

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.projects import Project
    from memverbs.server.providers.config import Providers

_handlers: dict[str, Callable] = {}


class Outcome(Record):
    """A tool call's result before a transport encodes it."""

    __slots__ = ("aside", "body", "cause", "is_error", "meta", "warnings")
    body: dict
    is_error: bool
    warnings: list[str]  # extra text lines (unknown params)
    meta: dict | None
    # The brain or config failure behind an `unavailable` body, for in-process callers (hooks)
    # that act on its type; never encoded.
    cause: MemverbsError | None
    # What a verb told a trusted in-process caller beside its body, when that caller asked through
    # `extras` (server/verbs/readout.py: the reads a hook's moment needs, done in the same call); never encoded.
    aside: dict

    def __init__(self, body: dict, is_error: bool = False, warnings: list[str] | None = None, meta: dict | None = None,
                 cause: MemverbsError | None = None, aside: dict | None = None) -> None:
        super().__init__(body=body, is_error=is_error, warnings=[] if warnings is None else warnings, meta=meta,
                         cause=cause, aside={} if aside is None else aside)


class Dispatcher(Record):
    """Per-connection dispatch state: who calls, on which surface, against which brain."""

    __slots__ = ("caller", "on_call", "open_brain", "providers", "remote_private_pages", "strict_params", "surface")
    caller: Caller
    surface: str
    open_brain: Callable[[], Brain]  # raises BrainError/ConfigError when the brain cannot serve
    strict_params: bool
    remote_private_pages: bool
    on_call: Callable[[str, bool, int, dict | None], None] | None  # usage log hook
    providers: Providers | None

    def __init__(self, caller: Caller, surface: str, open_brain: Callable[[], Brain], strict_params: bool = False,
                 remote_private_pages: bool = False, on_call: Callable[[str, bool, int, dict | None], None] | None = None,
                 providers: Providers | None = None) -> None:
        super().__init__(caller=caller, surface=surface, open_brain=open_brain, strict_params=strict_params,
                         remote_private_pages=remote_private_pages, on_call=on_call, providers=providers)

    @classmethod
    def local(cls, source: str, open_brain: Callable[[], Brain], surface: str = "full",
              providers: Providers | None = None, project: Project | None = None, lane: str = LOCAL_LANE) -> Dispatcher:
        """The trusted in-process caller's dispatcher (the CLI through Runtime, the hooks): lane
        'local', private facts visible, no usage log. Built here, so both get the same one.
        `project`: where the caller runs (server/projects.py), for what it remembers and its packs."""
        return cls(caller=Caller.local(source, project, lane), surface=surface, open_brain=open_brain, providers=providers)

    def visible(self) -> frozenset[str]:
        return allowed(self.surface)

    def call(self, name: str, arguments: dict | None, *, extras: dict | None = None) -> Outcome:
        """`extras`: what an in-process trusted caller tells a verb beside its wire parameters (the
        markdown import's `valid_from` for a fact read back from an export); ignored for any other caller."""
        started = time.perf_counter()
        op = BY_NAME.get(name)
        if op is None or name not in self.visible():
            return Outcome(unknown_tool(name, self.visible()), is_error=True)
        outcome = self._run(op, arguments, extras if extras and self.caller.trusted else None)
        if self.on_call is not None and op.verb:
            latency = round((time.perf_counter() - started) * 1000)
            self.on_call(name, not outcome.is_error, latency, None if outcome.is_error else outcome.body)
        return outcome

    def _run(self, op: Operation, arguments: dict | None, extras: dict | None = None) -> Outcome:
        try:
            if op.scope not in self.caller.scopes:
                raise VerbError(
                    "scope_denied",
                    f"{op.name} needs the '{op.scope}' scope; this connection has: {', '.join(sorted(self.caller.scopes)) or 'none'}.",
                    f"This token cannot {op.scope}. Ask the brain's operator for a token with the {op.scope} scope "
                    "(`memverbs auth create NAME --scopes read,write`), or use a read verb instead.",
                )
            if arguments is not None and not isinstance(arguments, dict):
                raise invalid("Tool arguments must be a JSON object.")
            checked = pipeline.check(op, arguments, strict=self.strict_params)
            ctx = VerbContext(
                brain=self.open_brain(),
                caller=self.caller,
                remote_private_pages=self.remote_private_pages,
                dry_run=bool((arguments or {}).get("dry_run")),
                extras={**(extras or {}), "surface": self.surface},
                providers=self.providers,
            )
            with acting(self.caller.actor()):  # the brain reads and writes as the caller's person
                body = handler(op)(ctx, checked.params)
        except VerbError as exc:
            return Outcome(exc.envelope(), is_error=True)
        except (BrainError, ConfigError) as exc:
            return Outcome(unavailable(exc), is_error=True, cause=exc)
        except MemverbsError as exc:
            return Outcome(internal(exc.message), is_error=True)
        except Exception as exc:  # the dispatcher's last line (a boundary): a bug is logged and answers `internal`
            import logging  # noqa: PLC0415 - only a bug pays for logging's imports (a hook's path has none)

            logging.getLogger("memverbs.dispatch").exception("internal error in %s", op.name)
            return Outcome(internal(str(exc) or type(exc).__name__), is_error=True)
        outcome = Outcome(body, aside=ctx.extras.get("aside"))
        if checked.unknown:
            outcome.warnings = checked.warning_lines()
            outcome.meta = {"warnings": checked.warnings_meta()}
        return outcome


def handler(op: Operation) -> Callable:
    fn = _handlers.get(op.name)
    if fn is None:
        module, _, attr = op.handler.partition(":")
        # The import statement's own function (importlib would be one more module on a hook's start);
        # with a fromlist it returns the named module itself, not its top package.
        fn = getattr(__import__(module, fromlist=[attr]), attr)
        _handlers[op.name] = fn
    return fn


def unknown_tool(name: str, visible: frozenset[str]) -> dict:
    """The same bytes for a hidden tool and a nonexistent one: nothing about the hidden set leaks."""
    body: dict = {"error": "unknown_tool", "message": f"Unknown tool: {name}"}
    near = pipeline.nearest(name, visible)
    if near:
        body["suggestion"] = f'Did you mean "{near}"?'
    return body


def unavailable(exc: MemverbsError) -> dict:
    return VerbError("unavailable", f"The brain cannot serve this call: {exc.message}", exc.fix or "Run `memverbs doctor`.").envelope()


def internal(message: str) -> dict:
    return {"error": "internal", "message": message, "suggestion": INTERNAL_SUGGESTION, "protocol_version": PROTOCOL_VERSION}
