"""Brain → file: a synced page written through memverbs (put_page from an agent, the CLI) goes back to its file,
and a page born in the brain under the folder's prefix gets a new one (server/sync/new_files.py).

A page is due when its `updated_at` is past the one recorded at its file's last sync.
If the file is also unchanged since then, the rendered page replaces it atomically
(temp file + rename, so an editor never reads half a file). If the file changed too,
both sides moved: the file wins and the brain's version is kept as a conflict.
The file is read and replaced without following a symlink anywhere below the folder
(server/files.py's `replace_inside`): a file that became a link, or sits in a folder that
did, is an error in the report, and whatever the link points at is left untouched.

What is written is server/sync/render.py's: the note as it was, plus only what the brain
added that it does not say yet, so a second cycle with no new change writes nothing. A
byte-order mark the file starts with is kept. Just before the replace the file is read
again: if it changed since it was hashed (an editor saved in between), the write is
abandoned and the change counts as both sides moving, a conflict the file wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.files import OutsideFolder, read_inside, replace_inside, stat_inside
from memverbs.server.sync.new_files import file_new_pages
from memverbs.server.sync.presence import why_unavailable
from memverbs.server.sync.render import render_page
from memverbs.server.sync.report import Report
from memverbs.server.sync.state import FileState
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.sync.importer import FolderPass

# A writer stamps updated_at before its transaction commits, so a page can appear with a stamp
# a little older than the last look: a watcher looks back this far each time.
LOOK_BACK_MS = 60_000


def write_back(folder_pass: FolderPass, report: Report, since: int = 0) -> None:
    """Write every due page of the pass's folder to its file (or record the conflict)."""
    from memverbs.server.sync.importer import file_hash  # noqa: PLC0415 - importer imports this module's users

    fp = folder_pass
    if fp.folder.unavailable_at is not None or why_unavailable(fp.folder) is not None:
        return  # a folder that is not there gets nothing written into it: that would make it anew, half empty
    for row in fp.brain.sync_due(fp.source, fp.folder.id, since):
        rel, slug = row["rel_path"], row["slug"]
        prev = fp.state.file(fp.folder, rel)
        try:
            data, _ = read_inside(fp.folder.root, rel, fp.max_bytes)
            current = file_hash(data)
        except FileNotFoundError:
            continue  # deleted: the next pass deletes the page
        except OutsideFolder as exc:
            report.add("errors", rel, f"not written back: {exc.message}")
            continue
        except OSError as exc:
            report.add("errors", rel, f"cannot read for write-back: {exc.strerror}")
            continue
        if prev is None or current != prev.file_hash:
            fp.apply(rel, report, prev)  # the file changed too: it wins, the conflict is recorded
            continue
        # The stamp is read before the render: a write landing after it leaves the page due again
        # (recording a later stamp beside the earlier text would never write that write back).
        page = fp.brain.page(fp.source, slug)
        if page is None:
            continue  # deleted meanwhile: the next pass deletes its file's record
        text = render_page(fp.brain, fp.source, slug)
        if text is None:
            continue
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        new = bom + text.encode("utf-8")
        if fp.dry_run:
            if new != data:
                report.add("written_back", rel)
            continue
        try:
            if new != data:
                if _changed_since(fp, rel, current):
                    fp.apply(rel, report, prev)  # saved while this was rendered: the file wins, as above
                    continue
                replace_inside(fp.folder.root, rel, new)
            st = stat_inside(fp.folder.root, rel)
        except OutsideFolder as exc:
            report.add("errors", rel, f"not written back: {exc.message}")
            continue
        except OSError as exc:
            report.add("errors", rel, f"cannot write back: {exc.strerror}")
            continue
        fp.state.record(fp.folder, FileState(rel, slug, file_hash(new), st.st_size, st.st_mtime_ns, page["updated_at"], now_ms()))
        if new != data:
            report.add("written_back", rel)
    file_new_pages(fp, report, since)


def _changed_since(fp: FolderPass, rel: str, digest: str) -> bool:
    """Whether the file's bytes are no longer those hashed as `digest` (compare before swap)."""
    from memverbs.server.sync.importer import file_hash  # noqa: PLC0415

    try:
        data, _ = read_inside(fp.folder.root, rel, fp.max_bytes)
    except FileNotFoundError:
        return True
    return file_hash(data) != digest
