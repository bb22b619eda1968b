"""Real Postgres servers for the tests, started in temporary data directories and stopped after.

Two kinds, because they cover the two vector paths:

* `pgvector` — the `pgserver` wheel: a Postgres build that bundles pgvector;
* `plain` — the distribution's Postgres (Debian's `postgresql` package: initdb and
  pg_ctl under /usr/lib/postgresql/<version>/bin), which has no pgvector.

Each listens on a unix socket in its data directory only (no TCP port to collide on). Postgres
refuses to run as root, so under root (CI) the distribution server runs as `nobody`. Both get a
password-checked role (`memverbs_pw`) for the credential tests. A server that cannot be found or
started is absent; tests skip Postgres only when every kind is absent, and fail instead when
MEMVERBS_REQUIRE_POSTGRES=1 (CI).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

PASSWORD_ROLE = "memverbs_pw"
PASSWORD = "s3cret-Pa55word"


@dataclass
class PgServer:
    kind: str  # pgvector | plain
    socket_dir: Path
    data_dir: Path
    port: int = 5432
    stop: object = None
    free: list[str] = field(default_factory=list)
    leases: int = 0
    tables: set[str] | None = None

    def url(self, db: str = "postgres", user: str = "postgres", password: str | None = None) -> str:
        auth = user if password is None else f"{user}:{quote(password, safe='')}"
        return f"postgresql://{auth}@/{db}?host={quote(str(self.socket_dir), safe='')}&port={self.port}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self, *, empty: bool = False) -> str:
        """A fresh database on this server, its URL: a brain already at the current schema, or with
        `empty` a database with nothing in it.

        Brains are leased: `drop_database` empties a brain (TRUNCATE … RESTART IDENTITY, so ids start
        at 1 again) and keeps it for the next test, which is much cheaper than creating a database
        and migrating it for every test. Each lease has its own URL (`application_name`), so nothing
        a process caches per brain URL carries over to the next test.
        """
        self.leases += 1
        owner = self._brain_owner()
        if not empty and self.free:
            name = self.free.pop()
        else:
            name = "t_" + uuid.uuid4().hex[:12]
            self.admin(f'CREATE DATABASE "{name}" TEMPLATE template0' + (f' OWNER "{owner}"' if owner else ""))
            if owner:
                self._admin_in(name, "CREATE EXTENSION IF NOT EXISTS vector" if self.kind == "pgvector" else "SELECT 1")
            if not empty:
                from memverbs.server.brain.postgres import PostgresBrain

                PostgresBrain.open(self.url(name, user=owner or "postgres"), create=True).close()
                if self.tables is None:  # what a current brain holds: a reused one must hold just that
                    self.tables = set(self._public_tables(name))
        return self.url(name, user=owner or "postgres") + f"&application_name=lease{self.leases}"

    def _brain_owner(self) -> str | None:
        """With MEMVERBS_TEST_PG_OWNER=1, brains belong to a plain role (not a superuser, which no
        row-level security holds), as a deployment's do: the suites then run under the people policies."""
        if os.environ.get("MEMVERBS_TEST_PG_OWNER") != "1":
            return None
        self.admin("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mv_owner') THEN "
                   "CREATE ROLE mv_owner LOGIN CREATEDB CREATEROLE; END IF; END $$")
        return "mv_owner"

    def _admin_in(self, db: str, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(db), autocommit=True) as conn:
            conn.execute(sql)

    def drop_database(self, url: str) -> None:
        name = url.split("@/", 1)[1].split("?", 1)[0]
        if not self._reset(name):
            self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _public_tables(self, name: str) -> list[str]:
        import psycopg

        with psycopg.connect(self.url(name), autocommit=True) as conn:
            return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]

    def _reset(self, name: str) -> bool:
        """Empty a brain for reuse; False when it is not a current, intact brain any more."""
        import psycopg

        from memverbs.server.brain import migrations

        known = {m.name for m in migrations.MIGRATIONS}
        try:
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
                tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
                if "_migrations" not in tables:
                    return False
                steps = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
                if steps != known or set(tables) != self.tables:
                    return False
                for (index,) in conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' "
                    "AND starts_with(indexname, 'text_vectors_hnsw_')"
                ).fetchall():
                    conn.execute(f'DROP INDEX "{index}"')
                others = ", ".join(f'"{t}"' for t in tables if t != "_migrations")
                conn.execute(f"TRUNCATE {others} RESTART IDENTITY CASCADE")
        except psycopg.Error:
            return False
        self.free.append(name)
        return True

    def pg_ctl(self, action: str) -> None:
        """Stop or start the server (the fault tests take the database away and bring it back)."""
        self._pg_ctl(action)

    def _pg_ctl(self, action: str) -> None:
        raise NotImplementedError


def _configure(server: PgServer) -> None:
    """A throwaway server need not survive a power cut: no fsync (CREATE DATABASE per test is then cheap).
    And a role that must give its password, for the credential tests."""
    for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
        server.admin(f"ALTER SYSTEM SET {setting}")
    server.admin(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}' CREATEDB")
    hba = server.data_dir / "pg_hba.conf"
    hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text())
    server.admin("SELECT pg_reload_conf()")


# -- pgserver (with pgvector) --------------------------------------------------------------


class _PgserverServer(PgServer):
    def _pg_ctl(self, action: str) -> None:
        import pgserver

        ctl = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_ctl"
        args = [str(ctl), "-D", str(self.data_dir), "-w"]
        if action == "start":
            args += ["-o", f"-k {self.socket_dir} -c listen_addresses=''", "-l", str(self.data_dir / "log"), "start"]
        else:
            args += ["-m", "fast", "stop"]  # connections are cut at once; what was committed is kept
        _run_as(self._owner, args)

    _owner: str | None = None


def start_pgserver() -> PgServer | None:
    try:
        import pgserver
    except ImportError:
        return None
    data = Path(tempfile.mkdtemp(prefix="memverbs-pgvec-"))
    try:
        srv = pgserver.get_server(data, cleanup_mode="stop")
    except Exception:  # noqa: BLE001 - a wheel that will not start on this machine is simply absent
        shutil.rmtree(data, ignore_errors=True)
        return None
    host = srv.get_uri().split("host=", 1)[1].split("&", 1)[0]
    server = _PgserverServer("pgvector", socket_dir=Path(host), data_dir=data)
    server._owner = _owner_of(data)

    def stop() -> None:
        srv.cleanup()
        shutil.rmtree(data, ignore_errors=True)

    server.stop = stop
    return server


# -- the distribution's Postgres (no pgvector) ---------------------------------------------


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _owner_of(path: Path) -> str | None:
    owner = pwd.getpwuid(path.stat().st_uid).pw_name
    return owner if os.geteuid() == 0 and owner != "root" else None


def _run_as(user: str | None, args: list[str]) -> None:
    cmd = (["runuser", "-u", user, "--"] if user else []) + args
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


class _DistroServer(PgServer):
    bin_dir: Path | None = None
    user: str | None = None

    def _pg_ctl(self, action: str) -> None:
        args = [str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-w"]
        if action == "start":
            args += ["-o", f"-k {self.socket_dir} -c listen_addresses=''", "-l", str(self.data_dir / "log"), "start"]
        else:
            args += ["-m", "fast", "stop"]  # connections are cut at once; what was committed is kept
        _run_as(self.user, args)


def start_distro() -> PgServer | None:
    bin_dir = _bin_dir()
    if bin_dir is None:
        return None
    root = Path(tempfile.mkdtemp(prefix="memverbs-pg-"))
    data = root / "data"
    user = None
    if os.geteuid() == 0:  # Postgres refuses to run as root
        user = "nobody"
        os.chmod(root, 0o755)
        shutil.chown(root, user=user)
    try:
        _run_as(user, [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                       "--locale=C.UTF-8" if Path("/usr/lib/locale/C.utf8").exists() else "--locale=C"])
        server = _DistroServer("plain", socket_dir=root, data_dir=data)
        server.bin_dir, server.user = bin_dir, user
        server._pg_ctl("start")
    except (subprocess.SubprocessError, OSError):
        shutil.rmtree(root, ignore_errors=True)
        return None

    def stop() -> None:
        try:
            server._pg_ctl("stop")
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(root, ignore_errors=True)

    server.stop = stop
    return server


def start_servers() -> dict[str, PgServer]:
    servers: dict[str, PgServer] = {}
    for start in (start_pgserver, start_distro):
        server = start()
        if server is not None:
            _configure(server)
            servers[server.kind] = server
    return servers
