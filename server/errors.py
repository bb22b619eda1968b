"""The one rooted exception tree of memverbs.

Every error memverbs raises on purpose is a `MemverbsError`: a `message` that says
what is wrong and a `fix` that says what to do about it.

    MemverbsError
     ├── VerbError            a protocol error envelope for the caller (enumerated code)
     ├── BrainError           the brain cannot serve (missing, locked, corrupt, unwritable, unreachable)
     │    ├── BrainMissing
     │    ├── BrainLocked     another process holds the write lock past the busy timeout
     │    └── BrainCorrupt    the file is not a (healthy) SQLite database, or Postgres reports damaged data
     ├── ConfigError          the config file cannot be read or is invalid
     ├── FactEditRefused      a trusted restore or visibility change the fact's state forbids (code, fix)
     ├── ProviderError        an embedding or chat provider call failed (kind: timeout,
     │                        rate_limited, network, provider_error, model_unusable, no_key)
     ├── InstallError         installers/files.py: a harness file or CLI refused a change; nothing written
     │                        (JsonEditError, TomlEditError: a harness file memverbs cannot edit safely)
     ├── RemoteError          memverbs/remote/record.py: a remote brain URL, token or registration refused
     ├── HookError            hooks/events.py: a hook has no context to give; `code` goes to the hooks log
     │    ├── HookInputError  the harness's payload cannot be read (bad_input)
     │    ├── HookFailure     a verb answered with an error envelope (verb_<code>)
     │    └── RemoteHookError the remote brain did not answer (remote_unreachable, remote_401, …)
     ├── TargetError          memverbs/cli/target.py: the chosen brain (--remote) cannot be used
     ├── BindRefused          memverbs/ui/server.py: `memverbs ui` will not listen there
     └── module-local refusals, each caught where it is raised and turned into that
         module's answer: FrameError (a stdio line that is no request), BodyTooLarge
         (HTTP 413), TokenNameTaken, PageFormatError and FrontmatterRefused (a page's markdown),
         OutsideFolder (server/files.py: a path through a symlink), sync's Skip and Failure (one
         file's outcome), SlugSpaceTaken (a second folder claiming a slug prefix), and the CLI
         and UI's UsageError, WhenError, FilterError, ActionError.

Outside the tree, on purpose: the hook runner's `Deadline` and the capture worker's `LimitReached`
are BaseExceptions, like KeyboardInterrupt, so no `except Exception` on the way can swallow them.

Storage and config errors are translated into `VerbError(unavailable, ...)` once,
at the dispatch boundary; the CLI and `doctor` print them with their fix. A storage
error is classified by the driver's code (SQLite's result code, Postgres's SQLSTATE)
into its type, never by its message: the hooks log `brain_locked` for a `BrainLocked`.
Provider errors never reach the wire as text: verbs turn them into degraded
results or the closed set of warning codes, and their messages are written by
memverbs (status code and class), never copied from a provider's response.

A broad `except` lives only at a boundary that must answer whatever happens, each
marked `# noqa: BLE001` with its reason: the hook runner's fail-open wrapper, the
dispatcher's last line (`internal`), the stdio and HTTP transports' per-message guards,
the conformance runner's per-case guard, and the MCP client calls whose failures the
SDK does not bound (connect's probe, `--remote`, `protocol certify`).
"""

from __future__ import annotations

PROTOCOL_VERSION = 1

# The codes MEMORY_VERBS v1 enumerates (ERROR_SCHEMA). Order is the registry's.
ERROR_CODES = (
    "invalid_params",
    "provenance_required",
    "not_found",
    "scope_denied",
    "unavailable",
    "budget_unsatisfiable",
    "internal",
)

GENERIC_PARAM_SUGGESTION = "Check the tool schema — required params and types are declared there."
INTERNAL_SUGGESTION = (
    "This is a server-side failure, not a caller mistake. Retry once; if it persists, run `memverbs doctor`."
)


class MemverbsError(Exception):
    """Root of every error memverbs raises on purpose."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


class VerbError(MemverbsError):
    """A protocol error: serialised as the v1 error envelope, never as a traceback."""

    def __init__(self, code: str, message: str, suggestion: str, detail: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"not an enumerated MEMORY_VERBS error code: {code}")
        if not suggestion.strip():
            raise ValueError("a verb error needs a populated suggestion")
        super().__init__(message, suggestion)
        self.code = code
        self.suggestion = suggestion
        self.detail = detail

    def envelope(self) -> dict:
        body: dict = {"error": self.code, "message": self.message, "suggestion": self.suggestion}
        if self.detail is not None:
            body["detail"] = self.detail
        body["protocol_version"] = PROTOCOL_VERSION
        return body


class BrainError(MemverbsError):
    """The brain cannot serve this call; `fix` tells the operator what to do."""


class BrainMissing(BrainError):
    """No brain database where the settings point."""


class BrainLocked(BrainError):
    """Another process held the brain's lock for longer than this one would wait."""


class BrainCorrupt(BrainError):
    """The brain file is not a SQLite database or its pages are damaged; on Postgres, the server
    reports damaged data or indexes (SQLSTATE XX001/XX002; a database is never "not a database")."""


class ConfigError(MemverbsError):
    """The config file is unreadable or holds an invalid value."""


# Why a restore or a visibility change of one fact is refused (the trusted local caller's
# edits: `memverbs restore-fact`, `fact-visibility`, the inspector; never an MCP tool).
FACT_EDIT_REFUSALS = (
    "not_found",  # no such fact in this source
    "not_forgotten",  # restore: the fact is active
    "lapsed",  # restore: its ttl has passed; restored, it would still be inactive
    "superseded",  # restore: a newer fact replaced it; both active would contradict each other
    "duplicate",  # restore, visibility: an active fact already says the same about the same entity (in that visibility)
    "entity_gone",  # restore: the page it is filed under was deleted
    "invalid_visibility",  # visibility: neither world nor private
    "needs_intent",  # visibility: widening to world was not asked for explicitly
    "not_yours",  # visibility: the fact is another person's; only its owner changes its visibility
)


class FactEditRefused(MemverbsError):
    """A restore or visibility change refused with nothing written; `code` is one of FACT_EDIT_REFUSALS."""

    def __init__(self, code: str, message: str, fix: str) -> None:
        if code not in FACT_EDIT_REFUSALS:
            raise ValueError(f"not a fact edit refusal: {code}")
        super().__init__(message, fix)
        self.code = code


PROVIDER_ERROR_KINDS = ("timeout", "rate_limited", "network", "provider_error", "model_unusable", "no_key")


class ProviderError(MemverbsError):
    """A provider call failed; `kind` is one of PROVIDER_ERROR_KINDS, `status` the HTTP status if any."""

    def __init__(self, kind: str, message: str, fix: str = "", status: int | None = None) -> None:
        if kind not in PROVIDER_ERROR_KINDS:
            raise ValueError(f"not a provider error kind: {kind}")
        super().__init__(message, fix)
        self.kind = kind
        self.status = status


def invalid(message: str, suggestion: str = GENERIC_PARAM_SUGGESTION) -> VerbError:
    return VerbError("invalid_params", message, suggestion)
