"""The brain as a folder: every live page a file, every active fact a line.

A page that came from a synced or imported note is written at that note's own path and name
(`Plugins/Command palette.md`, under its folder's prefix), so the exported vault's links work
in Obsidian and importing it gives the same slugs; any other page at `<slug>.md`.

Private material stays out unless asked for: private pages are not written, private
facts-fence rows are cut from the pages that are, and private facts are left out of
`memverbs-facts.jsonl`. The report counts what was left out so the command can say so.

Files are written below the folder without following a symlink (server/files.py's
`replace_inside`): a link in the folder, to a file or a folder, is an error in the report and
is left as it is, so an export never replaces what a link points at.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from memverbs.server.files import OutsideFolder, read_inside, replace_inside
from memverbs.server.sync.facts_file import fact_lines
from memverbs.server.sync.render import render_page
from memverbs.server.sync.scan import FACTS_FILE
from memverbs.server.sync.slugs import path_for_slug, slug_for_path
from memverbs.server.sync.state import SyncState

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain


@dataclass
class ExportReport:
    folder: str
    include_private: bool
    pages: int = 0
    unchanged: int = 0
    facts: int = 0
    private_pages_left_out: int = 0
    private_rows_left_out: int = 0  # pages whose private facts-fence rows were cut
    private_facts_left_out: int = 0
    backup: dict[str, int] | None = None  # `--full`: rows per table in .memverbs-backup
    backup_left_out: dict | None = None  # `--full`: what the backup left out and why (its manifest's)
    attachments: int = 0  # files the notes embed, copied from their synced folder
    attachments_missing: list[tuple[str, str]] = field(default_factory=list)  # (note, target): not in the brain, folder gone
    errors: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["errors"] = [{"file": f, "reason": r} for f, r in self.errors]
        d["attachments_missing"] = [{"note": n, "target": t} for n, t in self.attachments_missing]
        return d


def export_brain(brain: Brain, source: str, dest: str, *, include_private: bool, full: bool = False,
                 everyone: bool = False, progress: Callable[[str], None] | None = None) -> ExportReport:
    """Every live page as a file and the active facts as lines; `full` adds the brain's own rows
    (server/sync/backup.py: with `everyone`, every person's), from which `import` restores it exactly.

    All of it is read in one snapshot of the brain: the notes and the backup are one moment, and
    no backup row points at a row the backup lacks, however busy the brain is meanwhile."""
    with brain.snapshot():
        return _export(brain, source, dest, include_private=include_private, full=full, everyone=everyone, progress=progress)


def _export(brain: Brain, source: str, dest: str, *, include_private: bool, full: bool, everyone: bool,
            progress: Callable[[str], None] | None) -> ExportReport:
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    report = ExportReport(str(root.resolve()), include_private)
    own = note_paths(brain, source)
    attachments = _Attachments(root, report)
    for slug, visibility in brain.live_page_slugs(source):
        if visibility == "private" and not include_private:
            report.private_pages_left_out += 1
            continue
        text = render_page(brain, source, slug, include_private=include_private)
        if text is None:
            continue
        if not include_private:
            everything = render_page(brain, source, slug, include_private=True)
            if everything != text:
                report.private_rows_left_out += 1
        note = own.get(slug)
        rel = note.path if note else path_for_slug(slug)
        if _write_if_changed(root, rel, _as_written(note, text) if note else text.encode("utf-8"), report):
            report.pages += 1
        attachments.copy(note, rel, text)
        if progress:
            progress(rel)
    lines, hidden = fact_lines(brain, source, include_private=include_private)
    report.private_facts_left_out = hidden
    facts_path = root / FACTS_FILE
    if lines:
        _write_if_changed(root, FACTS_FILE, "".join(lines).encode("utf-8"), report)
        report.facts = len(lines)
    elif facts_path.is_file() and not facts_path.is_symlink():
        facts_path.unlink()
    if full:
        from memverbs.server.sync.backup import write_backup  # noqa: PLC0415 - only a full export

        written = write_backup(brain, root, everyone=everyone)
        report.backup = written.tables
        report.backup_left_out = written.left_out
        report.errors.extend(written.errors)
    return report


class Note(NamedTuple):
    path: str  # in the export: the note's path, its folder's prefix in front
    root: str  # the synced folder it lives in
    rel: str
    file_hash: str  # at its last sync


def note_paths(brain: Brain, source: str) -> dict[str, Note]:
    """slug → the note it came from, for every page whose note path maps back to its slug and is
    the only one claiming that path in any letter case."""
    notes: dict[str, Note] = {}
    state = SyncState(brain, source)
    for folder in state.folders():
        for rel, f in state.files(folder).items():
            path = f"{folder.prefix}/{rel}" if folder.prefix else rel
            if f.slug and rel.lower().endswith(".md") and slug_for_path(path) == f.slug:
                notes.setdefault(f.slug, Note(path, folder.root, rel, f.file_hash))
    taken: dict[str, int] = {}
    for note in notes.values():
        taken[note.path.casefold()] = taken.get(note.path.casefold(), 0) + 1
    return {slug: note for slug, note in notes.items() if taken[note.path.casefold()] == 1}


def _as_written(note: Note, text: str) -> bytes:
    """The note's own bytes when it is unchanged since its last sync and says exactly `text` (so a
    byte-order mark comes along); else `text` encoded."""
    from memverbs.server.sync.importer import MAX_BYTES, file_hash  # noqa: PLC0415 - the importer imports render, as this does

    try:
        data, _ = read_inside(note.root, note.rel, MAX_BYTES)
    except (OSError, OutsideFolder):
        return text.encode("utf-8")
    if file_hash(data) == note.file_hash and data.removeprefix(b"\xef\xbb\xbf") == text.encode("utf-8"):
        return data
    return text.encode("utf-8")


class _Attachments:
    """The files a note embeds (`![[img.png]]`, `![](a.png)`, `[x](doc.pdf)`), copied beside it from the
    folder it was synced from: the brain keeps the note's text, never an attachment's bytes, so one
    whose folder (or file) is gone is reported missing, not invented."""

    def __init__(self, dest: Path, report: ExportReport) -> None:
        self.dest, self.report = dest, report
        self.done: set[str] = set()
        self.vaults: dict[str, list[str]] = {}  # root → its attachments' paths, shortest first

    def copy(self, note: Note | None, path: str, text: str) -> None:
        from memverbs.server.pages.markdown import body_attachments  # noqa: PLC0415

        wanted = body_attachments(text)
        if not wanted:
            return
        for target, by_name in wanted:
            rel = self.find(note, target, by_name) if note is not None else None
            if rel is None:
                self.report.attachments_missing.append((path, target))
                continue
            assert note is not None
            out = note.path[: len(note.path) - len(note.rel)] + rel  # beside the note, under its folder's prefix
            if out in self.done:
                continue
            self.done.add(out)
            try:
                data, _ = read_inside(note.root, rel, MAX_ATTACHMENT)
            except (OSError, OutsideFolder):
                self.report.attachments_missing.append((path, target))
                continue
            if len(data) > MAX_ATTACHMENT:
                self.report.errors.append((out, f"not copied: larger than {MAX_ATTACHMENT >> 20} MiB"))
            elif _write_if_changed(self.dest, out, data, self.report, count_unchanged=False):
                self.report.attachments += 1

    def find(self, note: Note, target: str, by_name: bool) -> str | None:
        """The attachment's path in the note's folder: a markdown link's from the note's own folder; a
        wikilink's there, then from the folder's top, then by file name anywhere (shortest path), as Obsidian."""
        here = posixpath.dirname(note.rel)
        direct = posixpath.normpath(posixpath.join(here, target))
        files = self.files(note.root)
        if direct.startswith("../") or direct == "..":
            return None  # outside the synced folder: never read
        if not by_name:
            return direct if direct in files else None
        for rel in (direct, posixpath.normpath(target)):
            if rel in files:
                return rel
        key = target.casefold()
        return next((f for f in files if f.casefold() == key or f.casefold().endswith("/" + key)), None)

    def files(self, root: str) -> list[str]:
        if root not in self.vaults:
            from memverbs.server.sync import scan  # noqa: PLC0415

            found = [e.rel for e in scan.walk(root) if e.kind == "skipped" and e.skip == scan.ATTACHMENT] if os.path.isdir(root) else []
            self.vaults[root] = sorted(found, key=lambda r: (r.count("/"), len(r), r))
        return self.vaults[root]


MAX_ATTACHMENT = 256 << 20


def _write_if_changed(root: Path, rel: str, data: bytes, report: ExportReport, *, count_unchanged: bool = True) -> bool:
    try:
        try:
            old, _ = read_inside(root, rel, len(data))
        except (FileNotFoundError, IsADirectoryError):
            old = None
        if old == data:
            report.unchanged += count_unchanged
            return True
        replace_inside(root, rel, data, make_dirs=True)
        return True
    except OutsideFolder as exc:
        report.errors.append((rel, f"not written: {exc.message}"))
        return False
    except OSError as exc:
        report.errors.append((rel, f"cannot write: {exc.strerror}"))
        return False
