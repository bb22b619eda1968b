"""Install steps through the harness's own CLI, where it is the supported writer (the command itself
runs through harness_cli.py, as every harness command memverbs runs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.installers.files import atomic_write_through, real_path

if TYPE_CHECKING:
    from memverbs.installers.steps import Context


@dataclass
class CliCommand:
    """A change made through the harness's own CLI, where it is the supported writer."""

    argv: list[str]
    undo: list[str]
    what: str
    env: dict | None = None
    # A file the CLI rewrites as a side effect although memverbs's own surgical steps manage it
    # (OpenClaw's `plugins install` rewrites all of openclaw.json): its bytes are put back after.
    keep: Path | None = None

    def apply(self, ctx: Context) -> dict:
        with _kept(self.keep, ctx):
            ctx.run(self.argv, self.env, check=bool(self.undo))  # a step with no undo only clears the way
        record = {"kind": "cli", "argv": self.argv, "undo": self.undo, "env": self.env is not None}
        if self.keep is not None:
            record["keep"] = str(self.keep)
        return record

    @staticmethod
    def revert(record: dict, ctx: Context, env: dict | None = None) -> None:
        if record.get("undo"):
            with _kept(Path(record["keep"]) if record.get("keep") else None, ctx):
                ctx.run(record["undo"], env, check=False)


@contextmanager
def _kept(path: Path | None, ctx: Context) -> Iterator[None]:
    """Put `path` back byte for byte (or absent again) after the block, whatever the block did to it."""
    if path is None or ctx.dry_run:
        yield
        return
    target = real_path(path)
    try:
        before: bytes | None = target.read_bytes()
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        before, mode = None, 0
    try:
        yield
    finally:
        if before is None:
            target.unlink(missing_ok=True)
        else:
            try:
                unchanged = target.read_bytes() == before
            except FileNotFoundError:
                unchanged = False
            if not unchanged:
                atomic_write_through(target, before.decode("utf-8"))
            os.chmod(target, mode)  # the CLI may have narrowed it (OpenClaw writes 0600)
