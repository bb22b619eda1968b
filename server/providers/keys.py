"""Provider API keys: the environment first, then the OS keyring; never a file in the repo or the home.

`keyring` is imported only when a provider is configured and its variable is
unset, so the hook and server start paths never pay for backend discovery.
Store a key with `keyring set memverbs <name>` (names below).
"""

from __future__ import annotations

import os

KEYRING_SERVICE = "memverbs"
EMBEDDINGS_KEY = ("MEMVERBS_EMBEDDINGS_API_KEY", "embeddings_api_key")
LLM_KEY = ("MEMVERBS_LLM_API_KEY", "llm_api_key")


def lookup(which: tuple[str, str]) -> tuple[str | None, str]:
    """(key, where it came from): `env`, `keyring` or `none`."""
    env_name, keyring_name = which
    value = os.environ.get(env_name, "").strip()
    if value:
        return value, "env"
    stored = _from_keyring(keyring_name)
    if stored:
        return stored, "keyring"
    return None, "none"


def _from_keyring(name: str) -> str | None:
    try:
        import keyring  # noqa: PLC0415 - backend discovery is slow; only when needed
        from keyring.errors import KeyringError  # noqa: PLC0415
    except ImportError:
        return None
    try:
        value = keyring.get_password(KEYRING_SERVICE, name)
    except (KeyringError, OSError, RuntimeError):
        # No usable backend (a headless box without a secret service): same as no key.
        return None
    return value.strip() if value else None


def how_to_set(which: tuple[str, str]) -> str:
    env_name, keyring_name = which
    return f"export {env_name}=… (or store it once: `keyring set {KEYRING_SERVICE} {keyring_name}`)"
