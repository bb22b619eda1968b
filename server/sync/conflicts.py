"""Sync conflicts you can read and settle: both sides, a diff, and `sync --resolve NOTE --keep file|brain|both`.

A conflict is recorded, with the brain's version of the page kept in `sync_conflicts`, when a file
and its page both changed since the last sync and the file won (`file_won`), or when a file was not
applied because another synced folder's note holds its slug (`slug_taken`): `said` puts each in
words. Settling one is a choice of which text the note holds from now on; it goes through `put_page`
(so links, chunks and page history follow, and the text it replaces stays in the history) and then
write-back, so the file holds it too. The kept row is marked resolved, never deleted: the brain's
version stays readable. `settle` is the one entry point, for `sync --resolve` and the inspector's
Conflicts view alike.

A conflict is its folder's person's, and its file is on its folder's host: only that person sees it
(on Postgres the row policies show nobody else a folder's conflicts), and it is settled only on that
host, where the file it rewrites is; elsewhere its file side is not read (a path there names another
file, if any).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memverbs.server.errors import MemverbsError
from memverbs.server.files import OutsideFolder, read_inside, replace_inside
from memverbs.server.pages.markdown import frontmatter_block

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain, Row
    from memverbs.server.dispatch import Dispatcher
    from memverbs.server.sync.importer import FolderPass

KEEP = ("file", "brain", "both")
CAUSES = ("file_won", "slug_taken")
READ_LIMIT = 2 * 1024 * 1024


def cause_of(row: Row) -> str:
    """What happened, as the row records it (a brain from before causes were kept: the file won)."""
    cols = set(row.keys())  # a sqlite3.Row's `in` looks among its values
    return row["cause"] if "cause" in cols and row["cause"] else "file_won"


def said(cause: str, slug: str) -> str:
    """What a conflict of `cause` over `slug` was, in words: the one label every report uses."""
    if cause == "slug_taken":
        return f"not applied: another synced folder's note holds {slug}; its page was kept as it is"
    return f"the file won; the brain's version of {slug} is kept"


class ConflictError(MemverbsError):
    """A conflict that cannot be settled as asked: a message and its fix."""


@dataclass
class Sides:
    brain: str  # the brain's version the file overrode
    file: str | None  # the file as it is now; None when it cannot be read (gone, a link, not UTF-8)
    file_problem: str | None

    def diff(self, rel: str) -> str:
        """A unified diff from the brain's kept version to the file as it is now."""
        if self.file is None:
            return ""
        return "".join(difflib.unified_diff(
            self.brain.splitlines(keepends=True), self.file.splitlines(keepends=True),
            fromfile=f"brain (kept) {rel}", tofile=f"file {rel}",
        ))


def sides(root: str, row: Row) -> Sides:
    try:
        data, _ = read_inside(root, row["rel_path"], READ_LIMIT)
        return Sides(row["brain_content"], data.decode("utf-8").removeprefix("\ufeff"), None)
    except FileNotFoundError:
        return Sides(row["brain_content"], None, "the file is gone")
    except OutsideFolder as exc:
        return Sides(row["brain_content"], None, exc.message)
    except OSError as exc:
        return Sides(row["brain_content"], None, f"cannot read it: {exc.strerror}")
    except UnicodeDecodeError:
        return Sides(row["brain_content"], None, "it is not UTF-8")


def describe(root: str, row: Row, *, elsewhere: str | None = None) -> dict:
    """What `sync --status --json` says about one open conflict: both sides and the diff. `elsewhere`:
    the host the folder is on, when that is not this machine (its file is not read here)."""
    s = Sides(row["brain_content"], None, f"the file is on {elsewhere}") if elsewhere else sides(root, row)
    return {"brain_content": s.brain, "file_content": s.file, "file_problem": s.file_problem, "diff": s.diff(row["rel_path"]),
            "cause": cause_of(row)}


def find(rows: list[Row], note: str) -> list[Row]:
    """The open conflicts NOTE names: a path to the file (absolute, or as given from here), its path
    inside its folder, its page's slug, or a conflict id (`#12`, `12`)."""
    note = note.strip()
    ident = note.removeprefix("#")
    by_id = [r for r in rows if ident.isdigit() and str(r["id"]) == ident]
    if by_id:
        return [r for r in rows if (r["folder_id"], r["rel_path"]) == (by_id[0]["folder_id"], by_id[0]["rel_path"])]
    real = os.path.realpath(note)
    return [r for r in rows if note in (r["rel_path"], r["slug"]) or os.path.join(r["root"], r["rel_path"]) == real]


def merged(file_text: str, brain_text: str, conflict_id: int) -> str:
    """`--keep both`: the file's text, with each part the brain's kept version has differently set
    beside it between conflict markers, to edit down by hand. The file's frontmatter is kept
    (markers there would make it unreadable YAML), or the brain's when the file has none; a brain
    frontmatter that differs from the file's goes in the markers."""
    head, body = _split(file_text)
    brain_head, brain_body = _split(brain_text)
    if not head:
        head = brain_head
    elif brain_head and brain_head != head:
        brain_body = brain_head + brain_body
    a, b = body.splitlines(keepends=True), brain_body.splitlines(keepends=True)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out += a[i1:i2]
            continue
        out.append("<<<<<<< file\n")
        out += _lines(a[i1:i2])
        out.append(f"======= brain (conflict #{conflict_id})\n")
        out += _lines(b[j1:j2])
        out.append(">>>>>>> brain\n")
    return head + "".join(out)


def _lines(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def _split(text: str) -> tuple[str, str]:
    """(frontmatter block with its --- lines, body); ("", text) without one."""
    head = frontmatter_block(text)
    return head, text[len(head) :]


@dataclass
class Settled:
    ids: list[int]
    rel_path: str
    slug: str
    kept: str
    done: str  # what was done, in a sentence


def settle(dispatcher: Dispatcher, brain: Brain, source: str, note: str, keep: str, *, max_bytes: int | None = None) -> Settled:
    """`sync --resolve NOTE --keep K`, and the inspector's settle button: find NOTE's open conflicts
    (see `find`), then `resolve` them in their folder. ConflictError says what is wrong and the fix."""
    from memverbs.server.sync.importer import MAX_BYTES, FolderPass  # noqa: PLC0415 - the importer imports this module's users
    from memverbs.server.sync.state import SyncState  # noqa: PLC0415

    if keep not in KEEP:
        raise ConflictError(f'--keep is one of {", ".join(KEEP)}, not "{keep}"', "Keep the file's version, the brain's, or both.")
    state = SyncState(brain, source)
    open_rows = state.conflicts()
    rows = find(open_rows, note)
    if not rows:
        listed = ", ".join(sorted({f"{r['rel_path']} (#{r['id']})" for r in open_rows})[:10]) or "none"
        raise ConflictError(f'no open conflict for "{note}" (open: {listed})',
                            "Name the note by its file, its path in the folder, its slug or #id, as `memverbs sync --status` lists it.")
    if len({r["folder_id"] for r in rows}) > 1:
        raise ConflictError(f'"{note}" names a note in several folders', "Pass the file's full path, or the conflict's #id.")
    folder = next(f for f in state.folders() if f.id == rows[0]["folder_id"])
    if not folder.here():
        raise ConflictError(
            f'"{note}" is a note of {folder.root} on {folder.host}, not this machine: its file is there',
            f"Settle it on {folder.host}, where the file is (`memverbs sync --resolve {rows[-1]['rel_path']} --keep {keep}`).",
        )
    fp = FolderPass(dispatcher, brain, source, folder, max_bytes=max_bytes or MAX_BYTES)
    done = resolve(fp, rows, keep)
    return Settled([r["id"] for r in rows], rows[-1]["rel_path"], rows[-1]["slug"], keep, done)


def resolve(fp: FolderPass, rows: list[Row], keep: str) -> str:
    """Settle the open conflicts of one note (the newest one's brain version counts); returns what was done."""
    from memverbs.server.sync.importer import put_note  # noqa: PLC0415
    from memverbs.server.sync.report import Report  # noqa: PLC0415
    from memverbs.server.sync.writeback import write_back  # noqa: PLC0415

    newest = rows[-1]
    rel, slug = newest["rel_path"], newest["slug"]
    report = Report(fp.folder.root, fp.folder.prefix)
    if keep != "file" and sides(fp.folder.root, newest).file_problem == "the file is gone":
        # Nothing to merge and nothing to overwrite: the kept version becomes the file again, and the
        # file is applied as any saved file is (which brings a page its deletion took back).
        try:
            replace_inside(fp.folder.root, rel, newest["brain_content"].encode("utf-8"), make_dirs=True)
        except (OutsideFolder, OSError) as exc:
            raise ConflictError(f"cannot write {rel}: {getattr(exc, 'message', None) or exc}", "Check the folder, then run this again.") from None
        fp.apply(rel, report, fp.state.file(fp.folder, rel))
        if report.errors:
            raise ConflictError(f"{rel} holds the brain's version again, but it did not apply: {report.errors[0][1]}",
                                f"Fix {rel}, then run `memverbs sync {fp.folder.root}`.")
        fp.state.resolve([r["id"] for r in rows])
        return f"{rel} was gone: it holds the brain's version again"
    # The file first: an edit not yet applied is the file's side, so it must be in the brain (and its
    # history) before either side is chosen.
    fp.apply(rel, report, fp.state.file(fp.folder, rel))
    if report.errors or report.conflicts:
        why = "; ".join(w for _, w in report.errors) or "the page changed again while settling"
        raise ConflictError(f"cannot settle {rel}: {why}", f"Fix the file, then run `memverbs sync --resolve {rel} --keep {keep}` again.")
    if keep == "file":
        done = f"kept the file's version of {rel}"
    else:
        s = sides(fp.folder.root, newest)
        if s.file is None and keep == "both":
            raise ConflictError(f"cannot keep both versions of {rel}: {s.file_problem}", f"Use --keep brain, or restore {rel} first.")
        text = s.brain if keep == "brain" else merged(s.file or "", s.brain, newest["id"])
        outcome = put_note(fp.dispatcher, slug, text, rel)
        if outcome.is_error:
            raise ConflictError(f"cannot write {slug}: {outcome.body.get('message')}", outcome.body.get("suggestion") or "")
        wrote = Report(fp.folder.root, fp.folder.prefix)
        write_back(fp, wrote)
        if wrote.errors:
            raise ConflictError(f"{slug} holds the chosen text, but {rel} was not written: {wrote.errors[0][1]}",
                                f"Run `memverbs sync {fp.folder.root}` once the file can be written.")
        done = (f"put the brain's version back into {rel}" if keep == "brain"
                else f"{rel} now holds both versions between <<<<<<< / >>>>>>> markers: edit it down")
    fp.state.resolve([r["id"] for r in rows])
    return done
