"""Run mypy on the `memverbs` package as it is installed, from a plain checkout.

The import package is assembled from the repository's rooms (`[tool.setuptools] package-dir` in
pyproject.toml: `memverbs.server` is `server/`, and so on). mypy resolves imports from directories
alone, so this builds a tree of symlinks with that shape (`.mypy-tree/memverbs/server -> server/`),
runs mypy over it with the `[tool.mypy]` configuration, and prints every path as the repository
file it points at, so a finding names the file you edit. Extra arguments go to mypy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / ".mypy-tree"


def package_rooms() -> dict[str, Path]:
    """Each top-level directory of the import package and the repository folder it comes from."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    rooms: dict[str, Path] = {}
    for package, folder in config["tool"]["setuptools"]["package-dir"].items():
        rooms[package.replace(".", "/")] = ROOT / folder
    return rooms


def build_tree(rooms: dict[str, Path]) -> None:
    """`.mypy-tree/memverbs/` holds the root package's own entries and one link per mapped room."""
    shutil.rmtree(TREE, ignore_errors=True)
    root_package = TREE / "memverbs"
    root_package.mkdir(parents=True)
    for entry in rooms.pop("memverbs").iterdir():
        if entry.name != "__pycache__":
            (root_package / entry.name).symlink_to(entry)
    for package, folder in rooms.items():
        (TREE / package).symlink_to(folder, target_is_directory=True)


def main(argv: list[str]) -> int:
    rooms = package_rooms()
    build_tree(dict(rooms))
    # Longest link first, so `memverbs/server/...` is not read as a file of `memverbs/`.
    links = sorted(
        ((f".mypy-tree/{package}/", folder) for package, folder in rooms.items()), key=lambda link: -len(link[0])
    )
    pattern = re.compile("|".join(re.escape(link) for link, _ in links))
    real = {link: os.path.relpath(folder, ROOT) + "/" for link, folder in links}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )
    sys.stdout.write(pattern.sub(lambda match: real[match.group(0)], result.stdout))
    sys.stderr.write(result.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
