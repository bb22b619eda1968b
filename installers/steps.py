"""Install steps: small, reversible changes to one harness's files or state.

A harness installer is a list of steps. Each step makes its change (`apply`,
against a Context that a dry run points at an overlay instead of the disk) and
can take back exactly that change (`revert`, for uninstall) from the record it
left in the receipt.
Steps edit entries, never whole files they do not own: a JSON member, a JSON
array item recognised by a fingerprint, a marked TOML block, a file memverbs
owns outright, or a command of the harness's own CLI.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memverbs.installers import toml_block
from memverbs.installers.files import InstallError, atomic_write, backup, newline_of, read_text, real_path
from memverbs.installers.jsonc import JsonDoc, JsonEditError

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

    def write(self, path: Path, before: str | None, after: str | None) -> None:
        """Replace `path` (None deletes it), with a backup of the original first."""
        if before == after:
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
                atomic_write(path, "")  # a file we created is someone's link now: empty its target, keep the link
            else:
                path.unlink(missing_ok=True)
        else:
            self.created_dirs += [str(d) for d in _missing_dirs(path.parent)]
            atomic_write(path, after)

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


def _file_state(before: str | None) -> dict:
    """What the file was before the install: absent, blank (its exact bytes kept), or a document."""
    state: dict = {"created_file": before is None}
    if before is not None and not before.strip():
        state["blank_file"] = before
    return state


def _given_back(record: dict, doc: JsonDoc) -> str | None:
    """The file after our entries are gone: no file if we made it, the same blank text if it was
    blank (an empty file stays empty, not `{}`), else the document as edited."""
    if doc.data == {}:
        if record.get("created_file"):
            return None
        if "blank_file" in record:
            return record["blank_file"]
    return doc.text


def _doc(path: Path, text: str | None) -> JsonDoc:
    try:
        return JsonDoc(text or "")
    except JsonEditError as exc:
        raise InstallError(
            f"{path} does not parse ({exc}); memverbs left it untouched",
            "Fix the file by hand (or move it aside) and run the install again.",
        ) from exc


@dataclass
class JsonEntry:
    """One member of a JSON/JSONC object, e.g. mcp.servers.memverbs. Owned when `owned(value)` says so."""

    path: Path
    keys: list[str]
    value: object
    owned: Callable[[object], bool]
    what: str = ""
    owner: str = ""  # recorded, so uninstall removes the entry only while base.OWNERS[owner] still recognises it

    def _compute(self, ctx: Context) -> tuple[str | None, str, list[str]]:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        current = doc.get(self.keys)
        if current is not None and not self.owned(current):
            raise InstallError(
                f"{self.path} already has a {'.'.join(self.keys)} entry that memverbs did not write",
                "Rename or remove that entry, or install under another name; memverbs will not overwrite it.",
            )
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys)) if doc.get(self.keys[:d]) is None]
        doc.set(self.keys, self.value)
        return before, doc.text, created


    def apply(self, ctx: Context) -> dict:
        before, after, created = self._compute(ctx)
        ctx.write(self.path, before, after)
        record = {"kind": "json_entry", "path": str(self.path), "keys": self.keys, "created_parents": created, **_file_state(before)}
        if self.owner:
            record["owner"] = self.owner
        return record

    @staticmethod
    def revert(record: dict, ctx: Context, owned: Callable[[object], bool] | None = None) -> None:
        """Remove the entry; with `owned`, only while it is still ours (someone may have replaced it)."""
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        current = doc.get(record["keys"])
        if owned is not None and current is not None and not owned(current):
            return
        doc.delete(record["keys"])
        for dotted in sorted(record.get("created_parents", []), key=len, reverse=True):
            keys = dotted.split(".")
            if doc.get(keys) == {}:
                doc.delete(keys)
        ctx.write(path, before, _given_back(record, doc))


@dataclass
class JsonArrayItem:
    """An item appended to a JSON array (e.g. one hook group), recognised later by `fingerprint`."""

    path: Path
    keys: list[str]
    item: object
    fingerprint: Callable[[object], bool]

    def _compute(self, ctx: Context) -> tuple[str | None, str, list[str]]:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        # The array and its parents that this install creates: only those are ours to remove.
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys) + 1) if doc.get(self.keys[:d]) is None]
        doc.remove_items(self.keys, self.fingerprint)  # idempotent: ours is replaced, never doubled
        doc.append(self.keys, self.item)
        return before, doc.text, created


    def apply(self, ctx: Context) -> dict:
        before, after, created = self._compute(ctx)
        ctx.write(self.path, before, after)
        return {
            "kind": "json_item",
            "path": str(self.path),
            "keys": self.keys,
            "item": self.item,
            "created_parents": created,
            **_file_state(before),
        }

    @staticmethod
    def revert(record: dict, ctx: Context, fingerprint: Callable[[object], bool]) -> None:
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        doc.remove_items(record["keys"], fingerprint)
        # Leave no empty containers we made (an emptied array, then its emptied parents), and
        # keep the user's own, even when empty.
        if "created_parents" in record:
            made = sorted(record["created_parents"], key=len, reverse=True)
        else:  # a receipt from before containers were recorded: every emptied one, as it then did
            made = [".".join(record["keys"][:d]) for d in range(len(record["keys"]), 0, -1)]
        for dotted in made:
            keys = dotted.split(".")
            if doc.get(keys) in ([], {}):
                doc.delete(keys)
            elif "created_parents" not in record:
                break
        ctx.write(path, before, _given_back(record, doc))


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
        record = {"kind": "toml_block", "path": str(self.path), **_file_state(before)}
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
                atomic_write(target, before.decode("utf-8"))
            os.chmod(target, mode)  # the CLI may have narrowed it (OpenClaw writes 0600)


# -- additions for Grok's pull block and OpenClaw's plugin load path ------------------

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


@dataclass
class JsonArrayValue:
    """A plain value in a JSON array (a path in OpenClaw's plugins.load.paths), recognised by equality.

    `stale` recognises earlier values of ours (a path an older install left) so a
    re-install replaces them instead of adding a second copy. Uninstall removes the
    value, then only the containers this step created, if they are empty.
    """

    path: Path
    keys: list[str]
    value: object
    stale: Callable[[object], bool] = lambda value: False

    def apply(self, ctx: Context) -> dict:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys) + 1) if doc.get(self.keys[:d]) is None]
        doc.remove_items(self.keys, lambda v: v == self.value or self.stale(v))
        doc.append(self.keys, self.value)
        ctx.write(self.path, before, doc.text)
        return {
            "kind": "json_value",
            "path": str(self.path),
            "keys": self.keys,
            "value": self.value,
            "created_parents": created,
            **_file_state(before),
        }

    @staticmethod
    def revert(record: dict, ctx: Context) -> None:
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        doc.remove_items(record["keys"], lambda v: v == record["value"])
        for dotted in sorted(record.get("created_parents", []), key=len, reverse=True):
            keys = dotted.split(".")
            if doc.get(keys) in ([], {}):
                doc.delete(keys)
        ctx.write(path, before, _given_back(record, doc))


def run_cli(argv: list[str], env: dict | None = None, *, check: bool = True) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise InstallError(f"{argv[0]} is not on PATH", f"Install {argv[0]} first, or check PATH.") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"`{' '.join(argv[:3])} …` did not finish in 120 s", "Run it by hand to see why.") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise InstallError(f"`{' '.join(argv[:4])} …` failed: {' / '.join(detail)}", "Run it by hand to see the full error.")
    return proc


def dumps(record: dict) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False)
