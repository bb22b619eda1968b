"""Brain → file: a synced page written through memverbs (put_page from an agent, the CLI) goes back to its file.

A page is due when its `updated_at` is past the one recorded at its file's last sync.
If the file is also unchanged since then, the rendered page replaces it atomically
(temp file + rename, so an editor never reads half a file). If the file changed too,
both sides moved: the file wins and the brain's version is kept as a conflict.
The file is read and replaced without following a symlink anywhere below the folder
(server/files.py's `replace_inside`): a file that became a link, or sits in a folder that
did, is an error in the report, and whatever the link points at is left untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.files import OutsideFolder, read_inside, replace_inside, stat_inside
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
        text = render_page(fp.brain, fp.source, slug)
        if text is None:
            continue
        if fp.dry_run:
            report.add("written_back", rel)
            continue
        page = fp.brain.page(fp.source, slug)
        if page is None:
            continue  # deleted since it was rendered: the next pass deletes its file's record
        data = text.encode("utf-8")
        try:
            replace_inside(fp.folder.root, rel, data)
            st = stat_inside(fp.folder.root, rel)
        except OutsideFolder as exc:
            report.add("errors", rel, f"not written back: {exc.message}")
            continue
        except OSError as exc:
            report.add("errors", rel, f"cannot write back: {exc.strerror}")
            continue
        fp.state.record(fp.folder, FileState(rel, slug, file_hash(data), st.st_size, st.st_mtime_ns, page["updated_at"], now_ms()))
        report.add("written_back", rel)
