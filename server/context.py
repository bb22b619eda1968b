"""Who is asking, and what a verb call runs against.

`Caller` is built once at the edge (CLI, hook, MCP transport) and passed down;
nothing lower guesses it. Every MCP caller is remote (stdio included): only the
in-process CLI and lifecycle hooks are trusted-local and own the 'local' lane.
"""

from __future__ import annotations

from memverbs.server.people import READ_PRIVATE, Actor
from memverbs.server.record import Frozen, Record

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row
    from memverbs.server.projects import Project
    from memverbs.server.providers.config import Providers

LOCAL_LANE = "local"
SYNC_LANE = "sync"  # the trusted in-process markdown sync: named apart so page history says who wrote
REMOTE_LANE = "remote"
ALL_SCOPES = frozenset({"read", "write"})


class Caller(Frozen):
    __slots__ = ("client_id", "person", "project", "remote", "scopes", "source_id")
    remote: bool
    client_id: str
    source_id: str
    scopes: frozenset[str]
    # Where the caller runs (server/projects.py): the hook's payload cwd, the stdio server's working
    # directory or its client's MCP root, the CLI's directory. None: no project (an HTTP client, a test).
    project: Project | None
    # The person the caller acts for (server/people.py): a token's person; None for the person the
    # brain's connection is (the trusted CLI's home, an auth-less server).
    person: int | None

    def __init__(self, remote: bool, client_id: str, source_id: str, scopes: frozenset[str] = ALL_SCOPES,
                 project: Project | None = None, person: int | None = None) -> None:
        super().__init__(remote=remote, client_id=client_id, source_id=source_id, scopes=scopes, project=project,
                         person=person)

    @classmethod
    def local(cls, source_id: str, project: Project | None = None, lane: str = LOCAL_LANE) -> Caller:
        return cls(remote=False, client_id=lane, source_id=source_id, project=project)

    @classmethod
    def mcp(cls, source_id: str, client_id: str | None = None, scopes: frozenset[str] = ALL_SCOPES,
            project: Project | None = None, person: int | None = None) -> Caller:
        lane = (client_id or "").strip() or REMOTE_LANE
        if lane == LOCAL_LANE:
            # The trusted lane is never reachable from a transport, whatever a token is called.
            lane = f"{REMOTE_LANE}:{LOCAL_LANE}"
        return cls(remote=True, client_id=lane[:200], source_id=source_id, scopes=scopes, project=project,
                   person=person)

    @property
    def trusted(self) -> bool:
        return self.remote is False

    @property
    def reads_private(self) -> bool:
        """May this caller read its person's private facts, pages and rows? The trusted local caller
        may; a remote one only with a token its person granted `read:private`. Which person's rows
        those are is the brain's to enforce (server/people.py): never another person's."""
        return self.trusted or READ_PRIVATE in self.scopes

    def actor(self) -> Actor:
        return Actor(self.person, self.reads_private)


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

    def person(self) -> int:
        """The person this call acts for: the caller's, or the one the brain's connection is."""
        if self.caller.person is not None:
            return self.caller.person
        if "person" not in self.extras:
            self.extras["person"] = self.brain.session_person()
        return int(self.extras["person"])

    def private_rows_of(self, page: Row) -> bool:
        """May this caller read the private facts-fence rows in `page`'s text (a row with its `owner`)?
        Only the page's writer may, through a trusted client or a read:private token."""
        return self.caller.reads_private and page["owner"] == self.person()

    def rows_reader(self) -> int | None:
        """The person whose private facts-fence rows this caller may read (`private_rows_of`), or None:
        nobody's. Searches rank every other page as if its private rows did not exist."""
        return self.person() if self.caller.reads_private else None

    @property
    def pages_private_ok(self) -> bool:
        """May this caller read private pages? Fail closed for anyone untrusted without read:private."""
        return self.caller.reads_private or self.remote_private_pages
