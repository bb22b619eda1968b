"""Where a brain lives: `$MEMVERBS_HOME` (default `~/.memverbs`) and the files in it.

Every path inside the home is relative to it, so a copied home keeps working.
Stdlib only: the hook path reads this on every session start, through the string forms (`dir`,
`place`): `pathlib` (with the `urllib.parse` and `ipaddress` it imports) is loaded by the first
`Path` a caller asks for, not by the hooks.
"""

from __future__ import annotations

import os

from memverbs.server.record import Frozen

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_SOURCE = "default"
CONFIG_NAME = "config.toml"
DEFAULT_BRAIN_NAME = "brain.db"
LOCAL_RECEIPT = "receipt.json"  # `memverbs install <harness>`
REMOTE_RECEIPT = "remote-receipt.json"  # `memverbs connect --install <harness>`: the hooks read it too


class Home(Frozen):
    __slots__ = ("dir",)
    dir: str  # the home's folder; `root` is the same as a Path

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(dir=os.fspath(root))

    @classmethod
    def from_env(cls) -> Home:
        raw = os.environ.get("MEMVERBS_HOME", "").strip()
        return cls(os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".memverbs"))

    @property
    def root(self) -> Path:
        from pathlib import Path  # noqa: PLC0415 - see the module's docstring

        return Path(self.dir)

    def place(self, relative: str | os.PathLike[str]) -> str:
        """`resolve`'s answer as a string."""
        p = os.path.expanduser(os.fspath(relative))
        return p if os.path.isabs(p) else os.path.join(self.dir, p)

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    def resolve(self, relative: str | os.PathLike[str]) -> Path:
        """A path from the config, anchored at the home unless it is absolute."""
        from pathlib import Path  # noqa: PLC0415

        return Path(self.place(relative))

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
