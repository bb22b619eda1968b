"""Install steps on text files: a marked TOML block (everything memverbs owns in a harness's
config.toml), a marked block in a file it does not own (an agent's instructions), and a file it
writes whole and owns (a plugin module, a hooks file of its own)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.installers import toml_block
from memverbs.installers.files import InstallError, newline_of
from memverbs.installers.steps import file_state

if TYPE_CHECKING:
    from memverbs.installers.steps import Context


@dataclass
class TomlBlock:
    """Everything memverbs owns in a TOML file, between two marker comments.

    `data` may be a callable of the context when it depends on earlier steps
    (Codex's hook trust hashes depend on where hooks.json put our groups).
    `top` holds top-level keys, set only where the user has not set them.
    `markers` says whose block it is: `memverbs install`'s, or `memverbs connect --install`'s.
    """

    path: Path
    data: dict | Callable[[Context], dict]
    conflicts: Callable[[dict], str | None] = lambda outside: None
    top: dict = field(default_factory=dict)
    markers: toml_block.Markers = toml_block.LOCAL

    def _compute(self, ctx: Context) -> tuple[str | None, str]:
        before = ctx.read(self.path)
        try:
            outside_text = toml_block.remove(before or "", self.markers)
            outside = toml_block.parse(outside_text, str(self.path))
        except toml_block.TomlEditError as exc:
            raise InstallError(f"{exc}; memverbs left it untouched", "Fix the file by hand and run the install again.") from exc
        problem = self.conflicts(outside)
        if problem:
            raise InstallError(f"{self.path}: {problem}", "Remove that entry (it is not memverbs's) and install again.")
        data = self.data(ctx) if callable(self.data) else self.data
        top = {k: v for k, v in self.top.items() if k not in outside}
        after = toml_block.upsert(before or "", data, top, self.markers)
        toml_block.parse(after, str(self.path))
        return before, after


    def apply(self, ctx: Context) -> dict:
        before, after = self._compute(ctx)
        ctx.write(self.path, before, after)
        record = {"kind": "toml_block", "path": str(self.path), **file_state(before)}
        if self.markers is not toml_block.LOCAL:
            record["markers"] = self.markers.name
        return record

    @staticmethod
    def revert(record: dict, ctx: Context) -> None:
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        after: str | None = toml_block.remove(before, toml_block.MARKERS[record.get("markers", "local")])
        if not after or not after.strip():
            after = None if record.get("created_file") else record.get("blank_file", after)
        ctx.write(path, before, after)


@dataclass
class OwnedFile:
    """A file memverbs writes whole and owns (a plugin module, a hooks file of our own)."""

    path: Path
    content: str
    marker: str  # a string only our version of this file contains

    def _check(self, ctx: Context) -> str | None:
        before = ctx.read(self.path)
        if before is not None and self.marker not in before:
            raise InstallError(
                f"{self.path} exists and was not written by memverbs",
                "Move it aside and install again; memverbs will not overwrite it.",
            )
        return before


    def apply(self, ctx: Context) -> dict:
        before = self._check(ctx)
        ctx.write(self.path, before, self.content)
        return {"kind": "owned_file", "path": str(self.path), "marker": self.marker}

    @staticmethod
    def revert(record: dict, ctx: Context) -> None:
        path = Path(record["path"])
        text = ctx.read(path)
        if text is not None and record["marker"] in text:
            ctx.write(path, text, None)



@dataclass
class LauncherFile(OwnedFile):
    """The hook launcher (hooks/launcher.py): an executable file memverbs owns, which the hooks of every
    harness installed from this home run; uninstall leaves it while another receipt records it."""

    def apply(self, ctx: Context) -> dict:
        before = self._check(ctx)
        ctx.write(self.path, before, self.content, mode=0o755)
        return {"kind": "owned_file", "path": str(self.path), "marker": self.marker, "shared": True}


MD_BEGIN = "<!-- >>> memverbs >>> managed by `memverbs install`; `memverbs uninstall` removes this block -->"
MD_END = "<!-- <<< memverbs <<< -->"


def _marked_span(text: str, begin: str, end: str, path: Path) -> tuple[int, int] | None:
    """Where our block is (markers and its closing newline included), or None."""
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        raise InstallError(
            f"{path} has the memverbs start marker but no end marker",
            f"Remove the broken memverbs block from {path} by hand and install again.",
        )
    stop += len(end)
    if text.startswith("\r\n", stop):
        return start, stop + 2
    return start, stop + 1 if text.startswith("\n", stop) else stop


@dataclass
class MarkedBlock:
    """Text memverbs owns inside a file it does not (an agent's instructions file), between marker lines.

    Appended after one newline of our own (in the file's line ending), so uninstall can cut
    that newline and the block and give the file back its original bytes; a re-install
    replaces the block in place. Markdown renders the HTML-comment markers as nothing.
    """

    path: Path
    body: str
    begin: str = MD_BEGIN
    end: str = MD_END

    def apply(self, ctx: Context) -> dict:
        before = ctx.read(self.path)
        nl = newline_of(before)
        body = self.body.rstrip().replace("\r\n", "\n").replace("\n", nl)
        block = f"{self.begin}{nl}{body}{nl}{self.end}{nl}"
        span = _marked_span(before or "", self.begin, self.end, self.path)
        if span and before is not None:
            after = before[: span[0]] + block + before[span[1] :]
        else:
            after = before + nl + block if before else block
        ctx.write(self.path, before, after)
        return {"kind": "marked_block", "path": str(self.path), "begin": self.begin, "end": self.end, "created_file": before is None}

    @staticmethod
    def revert(record: dict, ctx: Context) -> None:
        path = Path(record["path"])
        text = ctx.read(path)
        if text is None:
            return
        span = _marked_span(text, record["begin"], record["end"], path)
        if span is None:
            return
        start, stop = span
        nl = newline_of(text)
        if text[:start].endswith(nl):
            start -= len(nl)  # the newline apply put in front of the block
        elif start > 0 and text[start - 1] == "\n":
            start -= 1
        after = text[:start] + text[stop:]
        ctx.write(path, text, None if record.get("created_file") and not after else after)
