"""`memverbs brain-password set|status|delete`: a Postgres brain's password in the OS keyring.

`set` reads the password from the terminal (no echo) or one line of stdin — never from
an argument, which would land in shell history and `ps` — checks that the server
accepts it, then stores it with the same rules as a remote brain's token
(memverbs/remote/vault.py's TokenVault: a real secret store, or a backend the user chose
explicitly) and notes which backend holds it (server/brain/password.py). Nothing is
stored when the server refuses it. No command ever prints the password.
"""

from __future__ import annotations

import getpass
import sys
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.server.brain import password as pw
from memverbs.server.brain.factory import locate
from memverbs.server.brain.location import BrainLocation, redact
from memverbs.server.errors import MemverbsError
from memverbs.server.home import Home

if TYPE_CHECKING:
    import argparse


def _postgres_brain(args: argparse.Namespace, home: Home) -> BrainLocation | int:
    """The brain --url names, else the configured one; it must be a Postgres brain."""
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    try:
        where = locate(args.url, home, "brain.db") if args.url else Runtime(home).brain_location
    except MemverbsError as exc:
        return fail(exc.message, exc.fix, code=2)
    if where.backend != "postgres" or where.url is None:
        return fail(
            f"the brain is {where}, a SQLite file: it has no password",
            "Set brain.url to the Postgres brain first (`memverbs config set brain.url postgresql://user@host/db`), "
            "or pass --url.",
            code=2,
        )
    return where


def _read_password() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("Postgres password (not echoed): ")
    return sys.stdin.readline().rstrip("\r\n")


def run_brain_password(args: argparse.Namespace) -> int:
    home = Home.from_env()
    where = _postgres_brain(args, home)
    if isinstance(where, int):
        return where
    assert where.url is not None
    key = pw.brain_key(where.url)
    action = args.brain_password_command
    if action == "status":
        return _status(args, where, key)
    if action == "delete":
        return _delete(args, home, where, key)
    return _set(args, home, where, key)


def _set(args: argparse.Namespace, home: Home, where: BrainLocation, key: str) -> int:
    if pw.url_password(where.url or "") is not None:
        return fail(
            f"{where} carries its own password, which wins over the keyring",
            "Take the password out of brain.url (user@host, no :password), then run this again.",
        )
    secret = _read_password()
    if not secret:
        return fail("no password given", "Type it at the prompt, or pipe it in: `printf %s \"$PW\" | memverbs brain-password set`.", code=2)
    if not args.no_check:
        problem = _check(where.url or "", secret)
        if problem is not None:
            return fail(problem.message, problem.fix)
    from memverbs.remote.vault import TokenVault  # noqa: PLC0415 - keyring only for this command

    stored = TokenVault().store(key, secret)
    if not stored.ok:
        return fail(
            f"the password was NOT stored: {stored.reason}",
            "Give it in the memverbs process's environment instead (PGPASSWORD, e.g. a systemd EnvironmentFile=) or in "
            "~/.pgpass (mode 0600); or choose a keyring backend with PYTHON_KEYRING_BACKEND and run this again.",
        )
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415

    notes = pw.load_notes(home.root)
    notes[key] = {"keyring_backend": stored.backend, "stored_at": iso(now_ms())}
    try:
        pw.save_notes(home.root, notes)
    except OSError as exc:
        return fail(f"cannot write {pw.record_path(home.root)}: {exc.strerror}", f"Check that {home.root} is writable.")
    if args.json:
        print_json({"stored": True, "brain": str(where), "keyring_backend": stored.backend, "service": pw.SERVICE,
                    "user": key, "checked": not args.no_check})
        return 0
    checked = "accepted by the server, " if not args.no_check else ""
    print(f"password for {where} {checked}stored in the OS keyring ({stored.backend}), service {pw.SERVICE!r}, user {key!r}")
    return 0


def _check(url: str, secret: str) -> MemverbsError | None:
    """Does the server accept this password? A refusal or an unreachable server stores nothing."""
    try:
        import psycopg  # noqa: PLC0415

        from memverbs.server.brain.postgres_base import CONNECT_TIMEOUT_S, translate  # noqa: PLC0415
    except ImportError as exc:
        return MemverbsError(
            f"the Postgres driver is not installed ({exc.name})", "pip install 'memverbs[postgres]', or pass --no-check."
        )
    try:
        with psycopg.connect(url, password=secret, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        error = translate(exc, url, secret, tried="the password given to `memverbs brain-password set`")
        if "refused the credentials" not in error.message:
            error.fix = f"{error.fix} To store the password before the server is reachable, pass --no-check."
        return error
    return None


def _status(args: argparse.Namespace, where: BrainLocation, key: str) -> int:
    source = pw.password_source(where.url or "", where.keyring)
    found = None
    if where.keyring is not None and source.startswith("the OS keyring"):
        found = pw.keyring_password(where.url or "", where.keyring) is not None
    if args.json:
        print_json({"brain": str(where), "password_from": source, "keyring_backend": where.keyring, "user": key,
                    "in_keyring": found})
        return 0
    print(f"{where}: the password comes from {source}")
    if found is False:
        return fail("the keyring holds no password for this brain any more",
                    "Store it again with `memverbs brain-password set`.")
    return 0


def _delete(args: argparse.Namespace, home: Home, where: BrainLocation, key: str) -> int:
    notes = pw.load_notes(home.root)
    note = notes.pop(key, None)
    removed = False
    if note is not None:
        removed = pw.forget_keyring_password(key, str(note.get("keyring_backend") or ""))
        try:
            pw.save_notes(home.root, notes)
        except OSError as exc:
            return fail(f"cannot write {pw.record_path(home.root)}: {exc.strerror}", f"Check that {home.root} is writable.")
    if args.json:
        print_json({"brain": redact(where.url or ""), "noted": note is not None, "keyring_entry_removed": removed})
        return 0
    if note is None:
        print(f"no password for {where} was stored by memverbs: nothing to remove")
    else:
        print(f"password for {where} removed" + (" from the OS keyring" if removed else " (the keyring held none)"))
    return 0
