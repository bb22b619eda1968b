"""Where a remote brain's token is kept: the OS keyring (`keyring`), service `memverbs`, user = the
normalised URL.

A backend is used only if it is a real secret store (priority ≥ 1) or the user chose it explicitly
(`PYTHON_KEYRING_BACKEND` or keyring's own config file): keyring would otherwise pick a plaintext
file backend by itself on a machine without a secret service, and memverbs never writes a token in
plaintext behind the user's back. Without one, the token is not stored at all and the user sets
`MEMVERBS_REMOTE_TOKEN` instead — which also overrides the keyring anywhere (credentials.py).

Stdlib, and `keyring` imported lazily: it costs ~60 ms to import, and most commands never touch it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

SERVICE = "memverbs"


def _failures() -> tuple[type[BaseException], ...]:
    """What keyring and its backends raise when a store is missing, locked or broken: keyring's own
    errors derive from KeyringError; backends surface D-Bus, file and import problems as the others.
    (Imported lazily: keyring costs ~60 ms to import, and most commands never touch it.)"""
    from keyring.errors import KeyringError  # noqa: PLC0415

    return (KeyringError, RuntimeError, OSError, ValueError, ImportError)



@dataclass
class Stored:
    ok: bool
    backend: str  # the keyring backend used, or why none could be
    reason: str = ""


class TokenVault:
    """The OS keyring, used only when it is a real secret store or the user's explicit choice."""

    def backend(self):
        """(keyring backend, None) when usable, else (None, why not)."""
        try:
            import keyring  # noqa: PLC0415
            from keyring.backends import fail  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - keyring is a dependency
            return None, f"the keyring package cannot be imported ({exc})"
        try:
            backend = keyring.get_keyring()
        except _failures() as exc:
            return None, f"the keyring backend failed to load ({exc})"
        name = _backend_name(backend)
        if isinstance(backend, fail.Keyring) or type(backend).__module__ == "keyring.backends.null":
            return None, "no keyring backend is available on this machine"
        if getattr(backend, "priority", 0) < 1 and not _keyring_chosen_explicitly():
            return None, (
                f"the only keyring backend here is {name}, which is not a secure secret store "
                "(memverbs will not write a token there unless you choose it with PYTHON_KEYRING_BACKEND)"
            )
        return backend, None

    def store(self, url: str, token: str) -> Stored:
        backend, why = self.backend()
        if backend is None:
            return Stored(False, "", why)
        name = _backend_name(backend)
        try:
            backend.set_password(SERVICE, url, token)
            # A backend can accept a write and keep nothing (a null or misconfigured one): check.
            if backend.get_password(SERVICE, url) != token:
                return Stored(False, name, f"the keyring backend {name} did not keep the token")
        except _failures() as exc:  # a locked or broken keyring is a fallback, not a crash
            return Stored(False, name, f"the keyring backend {name} refused it ({type(exc).__name__}: {exc})")
        return Stored(True, name)

    def get(self, url: str) -> str | None:
        backend, _ = self.backend()
        if backend is None:
            return None
        try:
            return backend.get_password(SERVICE, url)
        except _failures():  # an unreadable keyring reads as "no token stored"
            return None

    def delete(self, url: str) -> bool:
        backend, _ = self.backend()
        if backend is None:
            return False
        try:
            backend.delete_password(SERVICE, url)
        except _failures():  # nothing stored there (PasswordDeleteError) or unreachable
            return False
        return True


def _backend_name(backend: object) -> str:
    return f"{type(backend).__module__}.{type(backend).__name__}"


def _keyring_chosen_explicitly() -> bool:
    if os.environ.get("PYTHON_KEYRING_BACKEND", "").strip():
        return True
    try:
        from keyring.util import platform_  # noqa: PLC0415

        cfg = platform_.config_root() / "keyringrc.cfg"
        return cfg.is_file() and "default-keyring" in cfg.read_text(encoding="utf-8", errors="replace")
    except (ImportError, OSError):  # no readable config: not an explicit choice
        return False
