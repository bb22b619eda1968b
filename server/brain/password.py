"""A Postgres brain's password kept in the OS keyring, never in a file memverbs writes.

libpq looks for a password in the URL, then `PGPASSWORD`, then `~/.pgpass`. memverbs adds
the OS keyring between the last two: `memverbs brain-password set` stores the password
there (service `memverbs`, user `brain:postgresql://user@host:port/db`: the URL's identity,
never its password) and notes in `$MEMVERBS_HOME/brain-passwords.json` which brain has
one and which keyring backend holds it — the note, not the password.

The note is what keeps this cheap: finding a keyring backend costs tenths of a second,
which a hook on every prompt cannot pay for a brain whose password lives elsewhere. Only
a brain with a note, whose URL holds no password and with `PGPASSWORD` unset, imports
`keyring` at open time — through the backend the note names, so a process started by a
harness (with less of the user's environment) reads the same store `set` wrote to.

Stdlib only at import (the hook path imports this module).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

SERVICE = "memverbs"
RECORD_NAME = "brain-passwords.json"
KEY_PREFIX = "brain:"


def brain_key(url: str) -> str:
    """The keyring user name for a brain: `brain:postgresql://user@host:port/db`, from the URL's
    user, host, port and database wherever it spells them (netloc, path or libpq's `?host=…`), so
    two spellings of one database share one entry and no password or option takes part."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    user = query.get("user") or unquote(parts.username or "")
    host = query.get("host") or parts.hostname or ""
    port = query.get("port") or (str(parts.port) if parts.port else "") or "5432"
    db = query.get("dbname") or unquote(parts.path.lstrip("/"))
    return f"{KEY_PREFIX}postgresql://{user}@{host}:{port}/{db}"


def url_password(url: str) -> str | None:
    """The password the URL itself carries (after `user:` or as `?password=`), if any."""
    parts = urlsplit(url)
    if parts.password is not None:
        return unquote(parts.password)
    found = parse_qs(parts.query).get("password")
    return found[-1] if found else None


# -- the note: which brains have a password in the keyring, and in which backend ------------------


def record_path(home_root: Path) -> Path:
    return home_root / RECORD_NAME


def load_notes(home_root: Path) -> dict[str, dict]:
    """{brain key: {"keyring_backend": …, "stored_at": …}}; an unreadable note reads as none (the
    password is then looked for where libpq looks, and a refusal's fix says how to store it again)."""
    try:
        data = json.loads(record_path(home_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    brains = data.get("brains") if isinstance(data, dict) else None
    return {k: v for k, v in brains.items() if isinstance(v, dict)} if isinstance(brains, dict) else {}


def save_notes(home_root: Path, notes: dict[str, dict]) -> None:
    """Atomically, like every file memverbs writes in the home (it holds no secret)."""
    path = record_path(home_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"brains": notes}, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def keyring_backend_for(home_root: Path, url: str) -> str | None:
    """The keyring backend holding this brain's password ("" for keyring's default), or None when
    the keyring is not where it comes from: no note, or the URL carries its own password."""
    if url_password(url) is not None:
        return None
    note = load_notes(home_root).get(brain_key(url))
    return None if note is None else str(note.get("keyring_backend") or "")


def find_session_bus() -> None:
    """A harness may run hooks and helpers without the desktop session's environment (Codex passes little
    more than HOME and PATH), and the Secret Service backend cannot reach a bus it has no address
    for. Use the session bus's standard socket ($XDG_RUNTIME_DIR/bus, else /run/user/<uid>/bus)
    when it is there, as libdbus and sd-bus do."""
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not hasattr(os, "getuid"):
        return
    bus = Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}") / "bus"
    if bus.is_socket():
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"


# -- reading it at open time -------------------------------------------------------------------------


def keyring_password(url: str, backend: str | None) -> str | None:
    """The password to connect with, or None to leave it to libpq (`PGPASSWORD`, `~/.pgpass`).

    `PGPASSWORD` beats the keyring as an environment variable beats the keyring for provider keys;
    a keyring that cannot be read is the same as an empty one (the server then says what is missing).
    """
    if backend is None or os.environ.get("PGPASSWORD"):
        return None
    find_session_bus()
    try:
        import keyring  # noqa: PLC0415 - backend discovery is slow: only for a brain whose note says so
        import keyring.core  # noqa: PLC0415
        from keyring.errors import KeyringError  # noqa: PLC0415
    except ImportError:
        return None
    try:
        ring = keyring.core.load_keyring(backend) if backend else keyring.get_keyring()
        value = ring.get_password(SERVICE, brain_key(url))
    except (KeyringError, RuntimeError, OSError, ValueError, ImportError, AttributeError):
        return None  # an unknown backend name (AttributeError/ImportError), a locked or missing store
    return value or None


def password_source(url: str, backend: str | None) -> str:
    """Where the password for this brain comes from, said without the password (doctor, `brain-password status`)."""
    if url_password(url) is not None:
        return "the URL"
    if os.environ.get("PGPASSWORD"):
        return "PGPASSWORD"
    if backend is not None:
        return f"the OS keyring ({backend or 'keyring default backend'})"
    return "libpq's ~/.pgpass, or none"


def forget_keyring_password(key: str, backend: str) -> bool:
    """Remove the entry `set` stored (through the backend it used); False when there was none or it cannot be reached."""
    try:
        import keyring  # noqa: PLC0415
        import keyring.core  # noqa: PLC0415
        from keyring.errors import KeyringError  # noqa: PLC0415
    except ImportError:
        return False
    try:
        ring = keyring.core.load_keyring(backend) if backend else keyring.get_keyring()
        ring.delete_password(SERVICE, key)
    except (KeyringError, RuntimeError, OSError, ValueError, ImportError, AttributeError):
        return False  # nothing stored there (PasswordDeleteError), or the store is unreachable
    return True
