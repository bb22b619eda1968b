"""Shared fixtures: a real brain in a throwaway home, and callers of every posture."""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import sys
from pathlib import Path

import pytest
import tiers
from helpers import Client, init_home

from memverbs.server.home import Home
from memverbs.server.runtime import Runtime


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if not pluginmanager.has_plugin("xdist"):
        # `-p no:xdist`: accept the `--numprocesses` in pyproject's addopts and run in one process.
        parser.addoption("--numprocesses", default=None, help="(pytest-xdist is disabled: ignored)")


def _chosen(config: pytest.Config, *options: str) -> bool:
    """Whether the command line itself (not addopts) gave one of `options` (`-n2`, `--dist=load`)."""
    return any(arg.startswith(options) for arg in config.invocation_params.args)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The default `pytest` runs on every core: `--numprocesses=auto` in pyproject's addopts (there
    so that pytest-cov, which decides before any conftest loads, measures the workers).

    The distribution is `worksteal`: each worker starts with a contiguous half of the tests, so a
    module's tests, and its module-scoped servers and installs, mostly stay on one worker, and an
    idle worker takes over the tail of the busy one's queue (OpenClaw's slow tests sit in a few
    files). A run that names single tests (`pytest path::test`) and measures no coverage runs in
    one process, where starting workers would cost more than it saves; so do `-n 0` and `--pdb`.
    """
    if hasattr(config, "workerinput") or not config.pluginmanager.has_plugin("xdist"):
        return
    single_tests = bool(config.args) and all("::" in arg for arg in config.args)
    if single_tests and not _chosen(config, "-n", "--numprocesses") and not config.pluginmanager.has_plugin("_cov"):
        config.option.numprocesses = 0
        return
    if config.option.numprocesses and not _chosen(config, "--dist", "-d"):
        config.option.dist = "worksteal"


# The end-to-end tier (`pytest -m e2e`; `-m "not e2e"` is the fast inner loop, README "Tests"):
# what needs a real harness binary, a real browser or a real Postgres server, and what spawns many
# processes (`slow`). Marked here from what a test uses, so a new test lands in the right tier
# without anyone remembering to mark it; `@pytest.mark.e2e` by hand marks what this cannot see.
E2E_CALLS = (
    "require_cli(", "require_openclaw(",  # tests/support/harnesses.py: a harness's real CLI
    "RemoteServer(",  # benchmarks/http_load.py: a real `serve --http` process
    'getfixturevalue("pg_servers")',  # a fixture that starts its own brain on a Postgres server
)
E2E_FIXTURES = {"browser", "pg_servers", "pg"}  # Chromium; a Postgres server


def _is_e2e(item: pytest.Item) -> bool:
    if item.get_closest_marker("e2e") or item.get_closest_marker("slow"):
        return True
    if Path(str(item.path)).parent.name == "e2e":
        return True
    names = set(getattr(item, "fixturenames", ()))
    if names & E2E_FIXTURES:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("brain_backend", "sqlite") != "sqlite":
        return True
    info = getattr(item, "_fixtureinfo", None)
    # A module that pins its brain to Postgres overrides the brain_backend fixture to say so.
    for d in (info.name2fixturedefs.get("brain_backend", ()) if info is not None else ()):
        if '"postgres' in _source(d.func):
            return True
    # A harness's real CLI or a real HTTP server, asked for by the test itself or by a fixture it uses.
    funcs = [getattr(item, "function", None)]
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        funcs += [d.func for d in defs]
    return any(call in _source(func) for func in funcs for call in E2E_CALLS)


@functools.cache  # one read per test function or fixture, however many tests use it
def _source(func: object) -> str:
    try:
        return inspect.getsource(func) if func is not None else ""  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e = pytest.mark.e2e
    for item in items:
        if _is_e2e(item) and not item.get_closest_marker("e2e"):
            item.add_marker(e2e)
    # require_cli refuses to run in a test outside the tier (one that reaches it through a helper
    # function this rule cannot read), so the fast tier never starts a harness.
    tiers.E2E_NODEIDS.update(item.nodeid for item in items if item.get_closest_marker("e2e"))


@pytest.fixture(scope="session")
def pg_servers():
    """Every kind of real Postgres server this machine can start (tests/support/postgres.py)."""
    from postgres import start_servers

    servers = start_servers()
    if os.environ.get("MEMVERBS_REQUIRE_POSTGRES") == "1":
        missing = {"pgvector", "plain"} - set(servers)
        if missing:
            for server in servers.values():
                server.stop()
            pytest.fail(f"MEMVERBS_REQUIRE_POSTGRES=1 but no {', '.join(sorted(missing))} Postgres could be started")
    yield servers
    for server in servers.values():
        server.stop()


def pg_server(request, kind: str):
    """The server for a backend name: `postgres` (pgvector if there is one) or `postgres-plain` (no pgvector)."""
    servers = request.getfixturevalue("pg_servers")
    server = servers.get("plain") if kind == "postgres-plain" else (servers.get("pgvector") or servers.get("plain"))
    if server is None:
        pytest.skip(f"no Postgres server for {kind} on this machine (pgserver wheel or the postgresql package)")
    return server


@pytest.fixture
def brain_backend(request) -> str:
    """sqlite, unless a test directory parametrises it (tests/server: every backend)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def pg(request, brain_backend):
    """The Postgres server the current backend runs on (skipped on sqlite and when there is none)."""
    if brain_backend == "sqlite":
        pytest.skip("a Postgres-only test")
    return pg_server(request, brain_backend)


@pytest.fixture
def brain_url(request, brain_backend):
    """The brain.url the home uses: None for the SQLite file, else a fresh database of its own."""
    if brain_backend == "sqlite":
        yield None
        return
    server = pg_server(request, brain_backend)
    url = server.new_database()
    yield url
    server.drop_database(url)


@pytest.fixture
def other_brain_url(request, brain_backend):
    """A second, empty brain on the same backend (a test's second home): None means its own SQLite file."""
    if brain_backend == "sqlite":
        yield None
        return
    server = pg_server(request, brain_backend)
    url = server.new_database()
    yield url
    server.drop_database(url)


@pytest.fixture(scope="session")
def empty_sqlite_home(tmp_path_factory) -> Path:
    """A home with an empty, migrated SQLite brain, made once: `home` copies it (a copy costs far
    less than migrating a new brain, and the brain holds nothing that names its home)."""
    root = tmp_path_factory.mktemp("template") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MEMVERBS_BRAIN__URL", raising=False)
        init_home(root)
    return root


@pytest.fixture
def home(request, tmp_path, monkeypatch, brain_url) -> Home:
    """An initialised MEMVERBS_HOME with an empty brain; the environment points at it."""
    root = tmp_path / "home"
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    for var in ("MEMVERBS_SOURCE", "MEMVERBS_MCP_SURFACE", "MEMVERBS_MCP_FORCE_SURFACE", "MEMVERBS_REMOTE_PRIVATE_PAGES"):
        monkeypatch.delenv(var, raising=False)
    if brain_url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", brain_url)
        return init_home(root)
    monkeypatch.delenv("MEMVERBS_BRAIN__URL", raising=False)
    shutil.copytree(request.getfixturevalue("home_template"), root)
    return Home(root)


@pytest.fixture
def home_template(empty_sqlite_home) -> Path:
    """The SQLite home `home` copies: the empty one, unless a module brings one with its own seed."""
    return empty_sqlite_home


@pytest.fixture
def runtime(home):
    rt = Runtime(home)
    yield rt
    rt.close()


@pytest.fixture
def local(runtime) -> Client:
    """The trusted in-process caller (CLI / hooks): lane 'local'."""
    return Client(runtime.local_dispatcher())


@pytest.fixture
def remote(runtime) -> Client:
    """An untrusted MCP caller on the full surface (what stdio clients are)."""
    return Client(runtime.mcp_dispatcher("full"))


@pytest.fixture(scope="session")
def memverbs_cmd() -> list[str]:
    """The command that runs this memverbs in a subprocess."""
    exe = shutil.which("memverbs")
    return [exe] if exe else [sys.executable, "-m", "memverbs"]


@pytest.fixture
def env(home) -> dict:
    e = dict(os.environ)
    e["MEMVERBS_HOME"] = str(home.root)
    return e


SNAPSHOTS = Path(__file__).parent / "snapshots"
