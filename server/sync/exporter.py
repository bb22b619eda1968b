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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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
    errors: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["errors"] = [{"file": f, "reason": r} for f, r in self.errors]
        return d


def export_brain(brain: Brain, source: str, dest: str, *, include_private: bool, progress: Callable[[str], None] | None = None) -> ExportReport:
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    report = ExportReport(str(root.resolve()), include_private)
    own = note_paths(brain, source)
    for slug, visibility in brain.live_page_slugs(source):
        if visibility == "private" and not include_private:
            report.private_pages_left_out += 1
            continue
        text = render_page(brain, source, slug, include_private=include_private)
        if text is None:
            continue
        if not include_private:
            full = render_page(brain, source, slug, include_private=True)
            if full != text:
                report.private_rows_left_out += 1
        rel = own.get(slug) or path_for_slug(slug)
        if _write_if_changed(root, rel, text, report):
            report.pages += 1
        if progress:
            progress(rel)
    lines, hidden = fact_lines(brain, source, include_private=include_private)
    report.private_facts_left_out = hidden
    facts_path = root / FACTS_FILE
    if lines:
        _write_if_changed(root, FACTS_FILE, "".join(lines), report)
        report.facts = len(lines)
    elif facts_path.is_file() and not facts_path.is_symlink():
        facts_path.unlink()
    return report


def note_paths(brain: Brain, source: str) -> dict[str, str]:
    """slug → the path of the note it came from (its folder's prefix in front), for every page whose
    note path maps back to its slug and is the only one claiming that path in any letter case."""
    paths: dict[str, str] = {}
    state = SyncState(brain, source)
    for folder in state.folders():
        for rel, f in state.files(folder).items():
            path = f"{folder.prefix}/{rel}" if folder.prefix else rel
            if f.slug and rel.lower().endswith(".md") and slug_for_path(path) == f.slug:
                paths.setdefault(f.slug, path)
    taken: dict[str, int] = {}
    for path in paths.values():
        taken[path.casefold()] = taken.get(path.casefold(), 0) + 1
    return {slug: path for slug, path in paths.items() if taken[path.casefold()] == 1}


def _write_if_changed(root: Path, rel: str, text: str, report: ExportReport) -> bool:
    data = text.encode("utf-8")
    try:
        try:
            old, _ = read_inside(root, rel, len(data))
        except (FileNotFoundError, IsADirectoryError):
            old = None
        if old == data:
            report.unchanged += 1
            return True
        replace_inside(root, rel, data, make_dirs=True)
        return True
    except OutsideFolder as exc:
        report.errors.append((rel, f"not written: {exc.message}"))
        return False
    except OSError as exc:
        report.errors.append((rel, f"cannot write: {exc.strerror}"))
        return False
