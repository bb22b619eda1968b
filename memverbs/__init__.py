"""memverbs: the MEMORY_VERBS v1 memory layer for coding agents.

The import package is assembled from the repository's top-level rooms
(`server/`, `hooks/`, `installers/`, `templates/`, `plugin/`), mapped in
pyproject.toml. An installed wheel has them all under this directory; a plain
checkout does not, so when imported from one we let the sibling rooms answer
for `memverbs.<room>` too. Nothing else is done at import time: this module is
on the hook's start-up path.
"""

from pathlib import Path as _Path

__version__ = "0.1.0"

_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "server" / "__init__.py").is_file():
    __path__.append(str(_checkout))
