"""memverbs: the MEMORY_VERBS v1 memory layer for coding agents.

The import package is assembled from the repository's top-level rooms
(`server/`, `hooks/`, `installers/`, `templates/`, `plugin/`), mapped in
pyproject.toml. An installed wheel has them all under this directory; a plain
checkout does not, so when imported from one we let the sibling rooms answer
for `memverbs.<room>` too. Nothing else is done at import time: this module is
on the hook's start-up path.
"""

import os as _os

__version__ = "0.1.0"

# os.path, not pathlib: pathlib's imports would be most of an unchanged heartbeat's cost.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "pyproject.toml")) and _os.path.isfile(
    _os.path.join(_checkout, "server", "__init__.py")
):
    __path__.append(_checkout)
