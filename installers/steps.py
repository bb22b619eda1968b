"""Install steps: small, reversible changes to one harness's files or state.

A harness installer is a list of steps. Each step makes its change (`apply`,
against a Context that a dry run points at an overlay instead of the disk) and
can take back exactly that change (`revert`, for uninstall) from the record it
left in the receipt.
Steps edit entries, never whole files they do not own. The kinds live by what they edit:

* installers/json_steps.py: a JSON member, a JSON array item recognised by a fingerprint,
  a plain value in a JSON array;
* installers/text_steps.py: a marked TOML block, a marked markdown block, a file memverbs
  owns outright;
* installers/command_steps.py: a command of the harness's own CLI.

This module holds what they share: the Step protocol, the Context they read and write through
(backups first, an overlay for a dry run) and the diff a dry run prints.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memverbs.installers.files import InstallError, atomic_write_through, backup, read_text
from memverbs.installers.harness_cli import run_cli

__all__ = ["InstallError", "Step"]  # its home is files.py; installers import it from here


class Step(Protocol):
    """One change to one harness file or CLI: `apply` makes it (or, rehearsing, records its diff)
    and returns the receipt record that the kind's `revert` undoes."""

    def apply(self, ctx: Context) -> dict: ...


@dataclass
class Context:
    """Where steps read and write. A dry run writes into an overlay instead of the disk,
    so it runs the very same code as a real run and shows the cumulative diff per file."""

    backups: Path
    dry_run: bool = False
    backed_up: set[Path] = field(default_factory=set)
    overlay: dict[Path, str | None] = field(default_factory=dict)
    originals: dict[Path, str | None] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)  # made for a file we wrote; uninstall removes them if empty

    def read(self, path: Path) -> str | None:
        return self.overlay[path] if path in self.overlay else read_text(path)

    def write(self, path: Path, before: str | None, after: str | None, *, mode: int | None = None) -> None:
        """Replace `path` (None deletes it), with a backup of the original first; `mode`: the file's
        permissions (kept as they are when not given)."""
        if before == after:
            if mode is not None and after is not None and not self.dry_run and path.exists() and path.stat().st_mode & 0o777 != mode:
                path.chmod(mode)
            return
        self.originals.setdefault(path, read_text(path))
        if self.dry_run:
            self.overlay[path] = after
            return
        if path not in self.backed_up:
            backup(path, self.backups)
            self.backed_up.add(path)
        if after is None:
            if path.is_symlink():
                atomic_write_through(path, "")  # a file we created is someone's link now: empty its target, keep the link
            else:
                path.unlink(missing_ok=True)
        else:
            self.created_dirs += [str(d) for d in _missing_dirs(path.parent)]
            atomic_write_through(path, after, default_mode=0o644 if mode is None else mode)
            if mode is not None:
                path.chmod(mode)

    def run(self, argv: list[str], env: dict | None, *, check: bool = True) -> None:
        self.commands.append("$ " + " ".join(argv))
        if not self.dry_run:
            run_cli(argv, env, check=check)

    def diffs(self) -> list[str]:
        return [diff(p, self.originals[p], self.overlay.get(p)) for p in self.originals]


def _missing_dirs(folder: Path) -> list[Path]:
    """The folders a write into `folder` will create, outermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.insert(0, folder)
        folder = folder.parent
    return missing


def remove_empty_dirs(dirs: list[str]) -> None:
    """Remove the folders an install created, deepest first, each only while empty: whatever
    someone else put there since keeps its folder."""
    for folder in sorted(set(dirs), key=lambda d: len(Path(d).parts), reverse=True):
        try:
            os.rmdir(folder)
        except OSError:
            continue


def diff(path: Path, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=f"{path} (before)" if before is not None else "/dev/null",
        tofile=f"{path} (after)" if after is not None else "/dev/null",
    )
    return "".join(lines)


def file_state(before: str | None) -> dict:
    """What the file was before the install: absent, blank (its exact bytes kept), or a document."""
    state: dict = {"created_file": before is None}
    if before is not None and not before.strip():
        state["blank_file"] = before
    return state
