"""Where a brain lives: `$MEMVERBS_HOME` (default `~/.memverbs`) and the files in it.

Every path inside the home is relative to it, so a copied home keeps working.
Stdlib only: the hook path reads this on every session start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SOURCE = "default"
CONFIG_NAME = "config.toml"
DEFAULT_BRAIN_NAME = "brain.db"


@dataclass(frozen=True)
class Home:
    root: Path

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

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def source_from_env() -> str:
    return os.environ.get("MEMVERBS_SOURCE", "").strip() or DEFAULT_SOURCE
