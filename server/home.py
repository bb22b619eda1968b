"""Where a brain lives: `$MEMVERBS_HOME` (default `~/.memverbs`) and the files in it.

Every path inside the home is relative to it, so a copied home keeps working.
Stdlib only: the hook path reads this on every session start.
"""

from __future__ import annotations

import os
from pathlib import Path

from memverbs.server.record import Frozen

DEFAULT_SOURCE = "default"
CONFIG_NAME = "config.toml"
DEFAULT_BRAIN_NAME = "brain.db"
LOCAL_RECEIPT = "receipt.json"  # `memverbs install <harness>`
REMOTE_RECEIPT = "remote-receipt.json"  # `memverbs connect --install <harness>`: the hooks read it too


class Home(Frozen):
    __slots__ = ("root",)
    root: Path

    def __init__(self, root: Path) -> None:
        super().__init__(root=root)

    @classmethod
    def from_env(cls) -> Home:
        raw = os.environ.get("MEMVERBS_HOME", "").strip()
        return cls(Path(raw).expanduser() if raw else Path.home() / ".memverbs")

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    def resolve(self, relative: str | Path) -> Path:
        """A path from the config, anchored at the home unless it is absolute."""
        p = Path(relative).expanduser()
        return p if p.is_absolute() else self.root / p

    @property
    def integrations(self) -> Path:
        return self.root / "integrations"

    @property
    def usage_log(self) -> Path:
        return self.integrations / "memory-verbs" / "usage.jsonl"

    def receipt(self, harness: str, name: str = LOCAL_RECEIPT) -> Path:
        """Where an install (or, with REMOTE_RECEIPT, a remote registration) records what it changed."""
        return self.integrations / harness / name

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def hook_log(self) -> Path:
        """One line per hook run, codes and sizes only (`memverbs doctor` reads it)."""
        return self.logs / "hooks.jsonl"

    @property
    def backups(self) -> Path:
        """Copies of harness files taken before an install changed them."""
        return self.root / "backups"


def source_from_env() -> str:
    return os.environ.get("MEMVERBS_SOURCE", "").strip() or DEFAULT_SOURCE
