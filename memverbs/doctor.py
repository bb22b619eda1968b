"""Doctor's checks: is this home healthy, and if not, what is the fix?

One report, which `memverbs doctor` prints (memverbs/cli/doctor.py) and the inspector's Health view
shows (memverbs/ui/views.py). Each room checks its own part — the brain (here for SQLite,
server/brain/postgres_health.py for Postgres), synced folders (server/sync/status.py), providers
(server/providers/health.py), harnesses (installers/health.py), a connected remote brain
(memverbs/remote/probe.py) — and this module puts them in one list.

Read-only: the brain is inspected through a read-only connection, so running
doctor never migrates, creates or repairs anything by surprise.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from memverbs.server.brain import migrations, sqlite_migrate
from memverbs.server.brain.factory import locate
from memverbs.server.errors import ConfigError
from memverbs.server.home import DEFAULT_BRAIN_NAME, Home, source_from_env
from memverbs.server.plural import plural
from memverbs.server.settings import Settings, load_settings
from memverbs.server.usage import read_events

if TYPE_CHECKING:
    from pathlib import Path

    from memverbs.server.brain.location import BrainLocation

@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None


def run_checks(home: Home) -> list[Check]:
    checks: list[Check] = []
    if not home.root.is_dir():
        checks.append(Check("home", "fail", f"no memverbs home at {home.root}", "Run `memverbs init` to create it."))
        return checks
    checks.append(Check("home", "ok", str(home.root)))
    settings: Settings | None = None
    try:
        settings = load_settings(home)
        config_at = home.config_path if home.config_path.exists() else "defaults (no config.toml)"
        checks.append(Check("config", "ok", f"{config_at}; source {settings.source}"))
    except ConfigError as exc:
        checks.append(Check("config", "fail", exc.message, exc.fix))
    where: BrainLocation | None
    try:
        where = locate(settings.brain.url, home, settings.brain.path) if settings else locate("", home, DEFAULT_BRAIN_NAME)
    except ConfigError as exc:
        checks.append(Check("brain", "fail", exc.message, exc.fix))
        where = None
    remote = remote_brain_checks(home)
    if remote and where is not None and where.exists() is False:
        # A machine that only uses a remote brain: the local brain, its providers and its usage
        # log live on the server (doctor there checks them); here the remote itself is checked.
        checks.append(Check("brain", "ok", f"no local brain at {where}: this machine uses the remote brain"))
        checks += remote
    else:
        if where is not None and where.backend == "postgres":
            from memverbs.server.brain.postgres_health import postgres_checks  # noqa: PLC0415 - psycopg only here

            checks += [Check(*row) for row in postgres_checks(where, home.usage_log)]
        elif where is not None:
            checks += brain_checks(where.file)
        if where is not None:
            from memverbs.server.sync.status import sync_checks  # noqa: PLC0415

            checks += [Check(*row) for row in sync_checks(where, settings.source if settings else source_from_env())]
        if settings is not None and where is not None:
            from memverbs.server.providers.health import provider_checks  # noqa: PLC0415 - probes only here

            checks += [Check(*row) for row in provider_checks(settings, where)]
        checks.append(usage_check(home))
        checks += remote
    from memverbs.installers.health import harness_checks  # noqa: PLC0415

    checks += [Check(**row) for row in harness_checks(home)]
    return checks


def remote_brain_checks(home: Home) -> list[Check]:
    """The remote brain `memverbs connect` set up: reachable, token accepted, which surface."""
    from memverbs.remote.credentials import token_for  # noqa: PLC0415
    from memverbs.remote.record import RemoteError, RemoteRecord  # noqa: PLC0415

    try:
        record = RemoteRecord.load(home)
    except RemoteError as exc:
        return [Check("remote brain", "fail", exc.message, exc.fix)]
    if record is None:
        return []
    token = token_for(record.url)
    if not token:
        return [Check(
            "remote brain", "fail", f"{record.url}: no token (not in the keyring, MEMVERBS_REMOTE_TOKEN unset)",
            'export MEMVERBS_REMOTE_TOKEN="mvb_…" (the token from `memverbs auth create` on the server), '
            "or run `memverbs connect URL` again where a keyring backend is available.",
        )]
    import anyio  # noqa: PLC0415 - the MCP client stack, only when a remote is connected

    from memverbs.remote.probe import describe, probe  # noqa: PLC0415

    try:
        report = anyio.run(probe, record.url, token)
    except RemoteError as exc:
        return [Check("remote brain", "fail", exc.message, exc.fix)]
    return [Check("remote brain", "ok", describe(report))]


def brain_checks(path: Path) -> list[Check]:
    if not path.is_file():
        return [Check("brain", "fail", f"no brain at {path}", "Run `memverbs init` to create it.")]
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return [Check("brain", "fail", f"cannot open {path}: {exc}", f"Check the permissions of {path}.")]
    try:
        quick = db.execute("PRAGMA quick_check").fetchone()[0]
        if quick != "ok":
            return [
                Check(
                    "brain",
                    "fail",
                    f"{path} failed its integrity check: {quick}",
                    f"Restore {path} from a backup, or salvage it with `sqlite3 {path} .recover`.",
                )
            ]
        out = [Check("brain", "ok", f"{path} readable, integrity ok")]
        newer = sqlite_migrate.unknown(db)
        waiting = [m.name for m in sqlite_migrate.pending(db)]
        if newer:
            out.append(
                Check(
                    "schema",
                    "fail",
                    f"the brain has schema steps this memverbs does not know ({', '.join(newer)}): a newer memverbs wrote it",
                    "Upgrade memverbs (pip install -U memverbs); the brain was not changed.",
                )
            )
        elif waiting:
            out.append(Check("schema", "warn", f"{plural(len(waiting), 'migration')} pending: {', '.join(waiting)}", "Run `memverbs init` to apply them."))
        else:
            out.append(Check("schema", "ok", f"current ({len(migrations.MIGRATIONS)} steps)"))
        return out
    except sqlite3.DatabaseError as exc:
        return [
            Check(
                "brain",
                "fail",
                f"{path} is not a readable brain ({exc})",
                f"Move {path} aside and run `memverbs init` for a fresh brain, or restore it from a backup.",
            )
        ]
    finally:
        db.close()


def usage_check(home: Home, days: int = 30) -> Check:
    path = home.usage_log
    if not path.exists():
        return Check("memory_verbs_usage", "ok", "no verb calls logged yet")
    try:
        events = read_events(path)
    except OSError as exc:
        return Check("memory_verbs_usage", "warn", f"cannot read {path}: {exc.strerror}", f"Check the permissions of {path}.")
    horizon = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")
    recent = [e for e in events if e["ts"] >= horizon]
    if not recent:
        return Check("memory_verbs_usage", "ok", f"no verb calls in the last {days} days")
    mix = ", ".join(f"{verb} {n}" for verb, n in Counter(e["verb"] for e in recent).most_common())
    return Check("memory_verbs_usage", "ok", f"{plural(len(recent), 'call')} in {plural(days, 'day')} ({mix}); last {max(e['ts'] for e in recent)}")
