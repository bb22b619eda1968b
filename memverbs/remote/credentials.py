"""Which token a remote brain gets: `$MEMVERBS_REMOTE_TOKEN` wins, else the one in the OS keyring.

Apart from vault.py so a remote hook with the token in its environment imports neither the
keyring vault nor keyring itself: it runs on every session start and prompt.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memverbs.remote.vault import TokenVault

TOKEN_ENV = "MEMVERBS_REMOTE_TOKEN"


def token_for(url: str, vault: TokenVault | None = None) -> str | None:
    """The token to send to `url`: `$MEMVERBS_REMOTE_TOKEN` wins, else the keyring's."""
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        return env
    if vault is None:
        from memverbs.remote.vault import TokenVault  # noqa: PLC0415 - only without the variable

        vault = TokenVault()
    return vault.get(url)
