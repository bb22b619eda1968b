"""One pass over a folder: every markdown file in, unchanged ones skipped by content hash.

The pass walks the folder once to know the total (paths only, never contents),
then takes the files one at a time: stat, read, hash, `put_page` through the
dispatcher, record the file's state. A file whose size and mtime match its state
is not even read; one whose bytes hash the same is unchanged. Nothing one file
does can stop the pass: every failure becomes a line in the report.

A `sync` pass also follows the folder: a file that disappeared while another with
its exact bytes appeared is a rename (the page moves to the new slug, keeping its
facts and links); one that only disappeared is a delete.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memverbs.server.errors import BrainError, MemverbsError, VerbError
from memverbs.server.files import OutsideFolder, read_inside, stat_inside
from memverbs.server.pages.markdown import PageFormatError, parse_page
from memverbs.server.sync import scan
from memverbs.server.sync.crossing import Crossing
from memverbs.server.sync.facts_file import read_facts
from memverbs.server.sync.identity import read_id, write_id
from memverbs.server.sync.moves import Moves, PassMoves
from memverbs.server.sync.presence import why_unavailable
from memverbs.server.sync.render import render_page
from memverbs.server.sync.report import Report
from memverbs.server.sync.slugs import note_name, slug_for_path
from memverbs.server.sync.state import FileState, Folder, SyncState
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.dispatch import Dispatcher, Outcome

MAX_BYTES = 2 * 1024 * 1024

Progress = Callable[[str, str], None]  # (file, outcome) after each file


@dataclass
class Read:
    text: str
    digest: str
    size: int
    mtime_ns: int


class Skip(MemverbsError):
    """This file is not imported, for a reason the report gives (not an error: nothing is wrong with the brain)."""


class Failure(MemverbsError):
    """This file could not be imported; the message says why and what to do."""


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_note(dispatcher: Dispatcher, slug: str, text: str, rel: str) -> Outcome:
    """put_page of a note's text; a note that declares no title is titled by its file name (never its slug)."""
    return dispatcher.call("put_page", {"slug": slug, "content": text}, extras={"file_name": note_name(rel)})


def declared_title(text: str) -> bool:
    """Whether the note names itself (a frontmatter `title`, or an H1)."""
    try:
        return parse_page(text).title is not None
    except PageFormatError:
        return True  # unreadable: keep whatever title the page has


def unavailable(outcome: Outcome) -> None:
    """An `unavailable` answer is the brain's state, not the file's: raise the error behind it, its type
    intact (the watcher retries a `BrainLocked` and reports a missing or corrupt brain as such)."""
    if outcome.body.get("error") != "unavailable":
        return
    if outcome.cause is not None:
        raise outcome.cause
    body = outcome.body
    raise BrainError(body.get("message", "the brain is unavailable"), body.get("suggestion") or "Retry in a moment.")


class FolderPass:
    """Applies a folder's files to the brain through a dispatcher, keeping per-file state."""

    def __init__(self, dispatcher: Dispatcher, brain: Brain, source: str, folder: Folder, *, dry_run: bool = False,
                 max_bytes: int = MAX_BYTES, restored: frozenset[str] | None = None):
        self.dispatcher = dispatcher
        # Just restored from this folder's backup (server/sync/restore.py; the SHA-256 of each note as the
        # export wrote it): a note as exported, or one that says what its page says, is recorded, not
        # written again (the backup's page is the truth), and the facts file is the backup's already.
        self.restored = restored
        self.brain = brain
        self.source = source
        self.folder = folder
        self.state = SyncState(brain, source)
        self.dry_run = dry_run
        self.max_bytes = max_bytes
        self._failing: set[str] | None = None  # files failing as they stand (sync_failures), read once
        self.crossing = Crossing(brain, source, folder)  # notes moved between synced folders

    # -- a whole pass --------------------------------------------------------

    def entries(self) -> list[scan.Entry]:
        return list(scan.walk(self.folder.root))

    def run(self, entries: list[scan.Entry], *, follow_deletes: bool, progress: Progress | None = None) -> Report:
        report = Report(self.folder.root, self.folder.prefix, self.dry_run)
        known = self.state.files(self.folder)
        if self.folder.id > 0:  # a folder the brain keeps (a dry run's first look at one has no row yet)
            why = why_unavailable(self.folder, entries, had_notes=any(f.slug for f in known.values()))
            if not self.dry_run:
                self.state.unavailable(self.folder, why)
            if why is not None:
                report.unavailable = why  # nothing is applied and nothing deleted: its pages stay as they are
                return report
            if self.folder.uid is not None and not self.dry_run and read_id(self.folder.root) is None:
                write_id(self.folder.root, self.folder.uid)  # its identity file was removed: the folder keeps its id
        # A file still there but skipped this time (grown too large, an editor's half-written save) is
        # not gone; nor is anything below a folder that could not be read, or that became a symlink
        # (not followed, so not read: its pages stay as they were, and write-back refuses them).
        present = {e.rel for e in entries}
        unreadable = tuple(
            e.rel + "/" for e in entries if e.skip == scan.SYMLINK or (e.kind == "error" and e.skip and e.skip.startswith("cannot read folder"))
        )
        gone = {rel: f for rel, f in known.items() if rel not in present and f.slug and not rel.startswith(unreadable)}
        moves = PassMoves(gone if follow_deletes else {}, [e.rel for e in entries if e.kind == "page" and e.rel not in known])
        claimed: dict[str, str] = {}
        facts_entry = None
        # Shortest paths first: of two notes with one name, the one a `[[name]]` means (the shorter
        # path, docs/sync.md "Links") exists before the other, so a link saved in between finds it.
        for e in sorted(entries, key=lambda e: (e.rel.count("/"), len(e.rel), e.rel)):
            if e.kind == "facts":
                facts_entry = e
                continue
            if e.kind in ("skipped", "error"):
                report.add("skipped" if e.kind == "skipped" else "errors", e.rel, e.skip or "")
                outcome = e.kind
            else:
                outcome = self.apply(e.rel, report, known.get(e.rel), claimed, moves)
            if progress:
                progress(e.rel, outcome)
        if facts_entry is not None:
            self.apply_facts(facts_entry, report, known.get(facts_entry.rel))
        if not self.dry_run:
            self.state.recovered(self.folder, sorted(self._failing_files() - present))  # gone: nothing to fix any more
            self._failing_files().intersection_update(present)
        if follow_deletes:
            for rel, f in gone.items():
                if rel not in moves.taken:  # not a note that moved
                    self.remove(rel, f, report)
        if not self.dry_run:
            self.state.pass_done(self.folder, report.changed)
        return report

    # -- one file ------------------------------------------------------------

    def apply(self, rel: str, report: Report, prev: FileState | None = None,
              claimed: dict[str, str] | None = None, moves: Moves | None = None) -> str:
        """Bring one file's page up to date; returns the outcome it was counted as. `moves`: the gone notes
        a new file may be (server/sync/moves.py); without it a new file is a new note."""
        try:
            outcome, why = self._apply(rel, prev, claimed if claimed is not None else {}, moves, report)
        except Skip as exc:
            outcome, why = "skipped", str(exc)
        except Failure as exc:
            outcome, why = "errors", str(exc)
        except MemverbsError:
            raise  # the brain cannot serve (locked, gone): not this file's fault, and no later file would fare better
        except Exception as exc:  # noqa: BLE001 - one bad file never aborts the pass
            outcome, why = "errors", f"unexpected {type(exc).__name__}: {exc}"
        report.add(outcome, rel, why)
        if not self.dry_run:
            self._note_failure(rel, outcome, why)
        return outcome

    def _failing_files(self) -> set[str]:
        if self._failing is None:
            self._failing = set(self.state.failures(self.folder))
        return self._failing

    def _note_failure(self, rel: str, outcome: str, why: str) -> None:
        """Keep a file that fails as it stands apart from pending work (status and doctor name it), and
        forget it once it applies. A file that vanished, or became a link, has nothing to fix."""
        failing = self._failing_files()
        if outcome in ("skipped", "errors"):
            try:
                st = stat_inside(self.folder.root, rel)
            except (OutsideFolder, OSError):
                return
            self.state.failed(self.folder, rel, st.st_size, st.st_mtime_ns, outcome, why)
            failing.add(rel)
        elif rel in failing:
            self.state.recovered(self.folder, [rel])
            failing.discard(rel)

    def _apply(
        self,
        rel: str,
        prev: FileState | None,
        claimed: dict[str, str],
        moves: Moves | None,
        report: Report,
    ) -> tuple[str, str]:
        slug = slug_for_path(rel, self.folder.prefix)
        other = claimed.get(slug)
        if other is None:
            owner = self.state.file_for_slug(self.folder, slug)
            if owner is not None and owner.rel_path != rel:
                if os.path.lexists(os.path.join(self.folder.root, owner.rel_path)):
                    other = owner.rel_path
                elif prev is None:
                    # The note was renamed to a name of the same slug (`Bob.md` → `bob.md`): still its page.
                    if moves is not None:
                        moves.claim(owner.rel_path)
                    if not self.dry_run:
                        self.state.forget(self.folder, owner.rel_path)
                    prev = replace(owner, rel_path=rel, mtime_ns=-1)  # read it: its bytes decide
        if other is not None and other != rel:
            raise Failure(f'maps to the same slug "{slug}" as {other}; rename one of them (`memverbs docs sync`: the slug rule)')
        claimed[slug] = rel
        page = self.brain.page(self.source, slug)
        if prev is not None and prev.slug and prev.slug != slug and page is None and not self.dry_run \
                and self.brain.page(self.source, prev.slug) is not None:
            # The same file, a new slug (the slug rule spells its name better now): the page moves,
            # keeping its facts and links, rather than a second page appearing beside it.
            # Its title follows when it was the old rule's fallback (the slug): a note without a title is named by its file.
            self.brain.rename_page(self.source, prev.slug, slug, now_ms(), title=(prev.slug, note_name(rel)))
            page = self.brain.page(self.source, slug)
        if prev is not None and page is not None and prev.slug == slug:
            try:
                st = stat_inside(self.folder.root, rel)
            except OutsideFolder as exc:
                raise Skip(exc.message) from None
            except FileNotFoundError:
                raise Skip("vanished while being read") from None
            if st.st_size == prev.size and st.st_mtime_ns == prev.mtime_ns:
                return "unchanged", ""
        got = self.read(rel)
        if prev is not None and page is not None and prev.slug == slug and prev.file_hash == got.digest:
            if not self.dry_run:
                self._record(rel, slug, got, page["updated_at"])
            return "unchanged", ""
        if (self.restored is not None and prev is None and page is not None
                and (got.digest in self.restored or render_page(self.brain, self.source, slug) == got.text)):
            if not self.dry_run:
                self._record(rel, slug, got, page["updated_at"])
            return "unchanged", ""
        self._check_slug_space(rel, slug, got)
        renamed_from = moves.take(rel, got.digest) if moves is not None and prev is None and page is None else None
        if renamed_from is not None:
            if self.dry_run:
                return "renamed", f"from {renamed_from.rel_path}"
            self.move(renamed_from, rel, slug, got, report)
            return "renamed", f"from {renamed_from.rel_path}"
        came = self.crossing.came_from(got.digest) if prev is None and page is None and not self.dry_run else None
        if came is not None:
            # A note moved here from another folder: its page comes with it (server/sync/crossing.py).
            self.brain.rename_page(self.source, came, slug, now_ms())
            self._put(slug, got.text, rel)
            self._record(rel, slug, got, self._updated_at(slug))
            return "renamed", f"from another synced folder (the page {came})"
        if prev is not None and page is not None and prev.page_updated_at is not None and page["updated_at"] > prev.page_updated_at:
            # Both sides changed since the last sync: the file wins, the brain's version is kept.
            if not self.dry_run:
                brain_version = render_page(self.brain, self.source, slug) or ""
                self.state.add_conflict(self.folder, rel, slug, brain_version)
            report.conflicts.append((rel, slug, "file_won"))
        if self.dry_run:
            self._check(slug, got.text)
            return ("created" if page is None else "updated"), ""
        self._put(slug, got.text, rel)
        self._record(rel, slug, got, self._updated_at(slug))
        return ("created" if page is None else "updated"), ""

    def _check_slug_space(self, rel: str, slug: str, got: Read) -> None:
        """A slug another folder's note holds is that note's page: this file never overwrites it. The clash
        is a conflict (the brain's page, which the file would have replaced, is kept with it) and the file
        fails as it stands until it is renamed or its folder gets a prefix of its own."""
        others = [r for r in self.brain.sync_slug_files(self.source, slug) if r["folder_id"] != self.folder.id]
        if not others:
            return
        other = others[0]
        if other["root"] is not None:
            where = f"{other['root']}/{other['rel_path']}" + (f" on {other['host']}" if other["host"] else "")
        else:  # another person's folder: named by whose and where, never by its path
            where = f"a note of {self._person_name(other['person'])}'s" + (f" on {other['host']}" if other["host"] else "")
        if not self.dry_run and not any(c["rel_path"] == rel and c["slug"] == slug for c in self.state.conflicts(self.folder)):
            self.state.add_conflict(self.folder, rel, slug, render_page(self.brain, self.source, slug) or "", "slug_taken")
        raise Failure(
            f'maps to the slug "{slug}", which {where} (another synced folder) holds; not applied, so neither note '
            "overwrites the other. Rename this file, or sync this folder with a --prefix of its own"
        )

    def _person_name(self, person: int) -> str:
        from memverbs.server.people import OWNER, OWNER_NAME  # noqa: PLC0415

        if person == OWNER:
            return OWNER_NAME
        return next((r["name"] for r in self.brain.people() if r["id"] == person), f"person {person}")

    def move(self, old: FileState, rel: str, slug: str, got: Read, report: Report) -> None:
        """A gone note is this new file: its page moves to the file's slug with its facts, aliases, links and
        history, then takes the file's text if that changed too. A page written through memverbs since the
        last sync is a conflict the file wins, as for a note that did not move."""
        page = self.brain.page(self.source, old.slug)
        if page is None:
            self._put(slug, got.text, rel)
        else:
            if old.slug != slug and self.brain.page(self.source, slug) is None:
                # A title that came from the old file name becomes the new one; a title the note declares stays.
                retitle = None if declared_title(got.text) else (note_name(old.rel_path), note_name(rel))
                self.brain.rename_page(self.source, old.slug, slug, now_ms(), title=retitle)
            if old.page_updated_at is not None and page["updated_at"] > old.page_updated_at:
                self.state.add_conflict(self.folder, rel, slug, render_page(self.brain, self.source, slug) or "")
                report.conflicts.append((rel, slug, "file_won"))
                self._put(slug, got.text, rel)
            elif got.digest != old.file_hash:
                self._put(slug, got.text, rel)
            # Same bytes: moving the page is the whole change (re-putting it would re-resolve its links
            # against slugs that may have just moved too).
        self.state.forget(self.folder, old.rel_path)
        self._record(rel, slug, got, self._updated_at(slug))

    def read(self, rel: str) -> Read:
        """The file's text, read without following a symlink anywhere below the folder (server/files.py)."""
        try:
            data, st = read_inside(self.folder.root, rel, self.max_bytes)
        except OutsideFolder as exc:
            raise Skip(exc.message) from None
        except FileNotFoundError:
            raise Skip("vanished while being read") from None
        except PermissionError:
            raise Failure("permission denied; make it readable (chmod u+r) and run again") from None
        except IsADirectoryError:
            raise Skip("is a folder") from None
        except OSError as exc:
            raise Failure(f"cannot read: {exc.strerror}") from None
        if st.st_size > self.max_bytes:
            raise Skip(f"too large ({st.st_size:,} bytes; the limit is {self.max_bytes:,}, see --max-bytes)")
        if len(data) > self.max_bytes:
            raise Skip(f"too large (over {self.max_bytes:,} bytes, see --max-bytes)")
        if b"\x00" in data:
            raise Skip("binary (contains NUL bytes), not markdown")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Skip(f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); re-save it as UTF-8") from None
        return Read(text.removeprefix("\ufeff"), file_hash(data), st.st_size, st.st_mtime_ns)

    def _put(self, slug: str, text: str, rel: str) -> None:
        outcome = put_note(self.dispatcher, slug, text, rel)
        if outcome.is_error:
            unavailable(outcome)
            body = outcome.body
            raise Failure(f"{body.get('message', 'put_page failed')} {body.get('suggestion') or ''}".strip())

    def _check(self, slug: str, text: str) -> None:
        """What `_put` would refuse, found without writing (a dry run): the same checks, the same message."""
        from memverbs.server.verbs.page_ops import checked_page  # noqa: PLC0415 - only a dry run needs the verb's checks

        try:
            checked_page(slug, text)
        except VerbError as exc:
            raise Failure(f"{exc.message} {exc.suggestion}".strip()) from None

    def _updated_at(self, slug: str) -> int | None:
        row = self.brain.page(self.source, slug)
        return row["updated_at"] if row else None

    def _record(self, rel: str, slug: str, got: Read, page_updated_at: int | None) -> None:
        self.state.record(self.folder, FileState(rel, slug, got.digest, got.size, got.mtime_ns, page_updated_at, now_ms()))

    # -- deletes and facts ---------------------------------------------------

    def remove(self, rel: str, prev: FileState, report: Report) -> None:
        """The file is gone: soft-delete its page (put_page revives it) and forget the file. A note whose
        bytes are another folder's note now moved there: what hangs off its page goes with it first."""
        if self.dry_run:
            report.add("deleted", rel)
            return
        self.crossing.moved_away(prev)
        if self.brain.page(self.source, prev.slug) is not None:
            outcome = self.dispatcher.call("delete_page", {"slug": prev.slug})
            if outcome.is_error:
                unavailable(outcome)
                report.add("errors", rel, outcome.body.get("message", "delete_page failed"))
                return
        self.state.forget(self.folder, rel)
        report.add("deleted", rel)

    def apply_facts(self, entry: scan.Entry, report: Report, prev: FileState | None) -> None:
        try:
            got = self.read(entry.rel)
        except (Skip, Failure) as exc:
            report.add("errors", entry.rel, str(exc))
            return
        if prev is not None and prev.file_hash == got.digest:
            return
        if self.restored is not None:
            if not self.dry_run:
                self._record(entry.rel, "", got, None)
            return
        for line, params, valid_from in read_facts(got.text):
            if isinstance(params, str):
                report.facts["errors"] += 1
                report.errors.append((f"{entry.rel}:{line}", params))
                continue
            if self.folder.prefix and params.get("entity"):
                params["entity"] = f"{self.folder.prefix}/{params['entity']}"
            if self.dry_run:
                continue
            outcome = self.dispatcher.call("remember", params, extras={"valid_from": valid_from})
            if outcome.is_error:
                unavailable(outcome)
                report.facts["errors"] += 1
                report.errors.append((f"{entry.rel}:{line}", outcome.body.get("message", "remember failed")))
            else:
                status = outcome.body["status"]
                report.facts[status] = report.facts.get(status, 0) + 1
        if not self.dry_run:
            self._record(entry.rel, "", got, None)
