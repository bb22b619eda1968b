"""Who is asking, and what a verb call runs against.

`Caller` is built once at the edge (CLI, hook, MCP transport) and passed down;
nothing lower guesses it. Every MCP caller is remote (stdio included): only the
in-process CLI and lifecycle hooks are trusted-local and own the 'local' lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.record import Frozen, Record

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.projects import Project
    from memverbs.server.providers.config import Providers

LOCAL_LANE = "local"
REMOTE_LANE = "remote"
ALL_SCOPES = frozenset({"read", "write"})


class Caller(Frozen):
    __slots__ = ("client_id", "project", "remote", "scopes", "source_id")
    remote: bool
    client_id: str
    source_id: str
    scopes: frozenset[str]
    # Where the caller runs (server/projects.py): the hook's payload cwd, the stdio server's working
    # directory or its client's MCP root, the CLI's directory. None: no project (an HTTP client, a test).
    project: Project | None

    def __init__(self, remote: bool, client_id: str, source_id: str, scopes: frozenset[str] = ALL_SCOPES,
                 project: Project | None = None) -> None:
        super().__init__(remote=remote, client_id=client_id, source_id=source_id, scopes=scopes, project=project)

    @classmethod
    def local(cls, source_id: str, project: Project | None = None) -> Caller:
        return cls(remote=False, client_id=LOCAL_LANE, source_id=source_id, project=project)

    @classmethod
    def mcp(cls, source_id: str, client_id: str | None = None, scopes: frozenset[str] = ALL_SCOPES,
            project: Project | None = None) -> Caller:
        lane = (client_id or "").strip() or REMOTE_LANE
        if lane == LOCAL_LANE:
            # The trusted lane is never reachable from a transport, whatever a token is called.
            lane = f"{REMOTE_LANE}:{LOCAL_LANE}"
        return cls(remote=True, client_id=lane[:200], source_id=source_id, scopes=scopes, project=project)

    @property
    def trusted(self) -> bool:
        return self.remote is False


class VerbContext(Record):
    __slots__ = ("brain", "caller", "dry_run", "extras", "providers", "remote_private_pages")
    brain: Brain
    caller: Caller
    # Operator opt-in (config search.remote_private_pages): untrusted callers may read private pages.
    remote_private_pages: bool
    dry_run: bool
    extras: dict
    # Embedding and chat providers; None (or unconfigured ones) means the contract's degraded modes.
    providers: Providers | None

    def __init__(self, brain: Brain, caller: Caller, remote_private_pages: bool = False, dry_run: bool = False,
                 extras: dict | None = None, providers: Providers | None = None) -> None:
        super().__init__(brain=brain, caller=caller, remote_private_pages=remote_private_pages, dry_run=dry_run,
                         extras={} if extras is None else extras, providers=providers)

    @property
    def source(self) -> str:
        return self.caller.source_id

    def project_slug(self, *, register: bool = False) -> str | None:
        """The caller's project's slug in this brain (server/projects.py), or None outside a project."""
        project = self.caller.project
        if project is None:
            return None
        from memverbs.server.projects import brain_slug  # noqa: PLC0415
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        return brain_slug(self.brain, self.source, project, register=register, now=now_ms())

    @property
    def pages_private_ok(self) -> bool:
        """May this caller read private pages? Fail closed for anyone untrusted."""
        return self.caller.trusted or self.remote_private_pages
