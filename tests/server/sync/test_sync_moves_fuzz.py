"""Nothing lost when notes move: random interleavings of what happens to synced folders, on every backend.

Each example is two synced folders (A with no prefix, B with `--prefix b`) and a random run of: create a
note, edit it, save it atomically (a temp file renamed over it), move it into a new folder or an existing
one, rename it, rename a folder, delete a note; the watcher applying what its observer would have reported
(a move either as one move event or, as inotify does for a move into a folder made a moment before, as a
delete there and a create here), its held deletes coming due, full passes, a watcher killed (abandoned with
its changes and held deletes, as `kill -9` leaves it) and a new one starting, and a second host's folder at
A's very path (MEMVERBS_HOST) syncing into the same brain. Each note has a fact filed under its page once
memverbs knows it.

The bars, after a final settling pass:
* **no lost text**: every version of every note that memverbs saw (at a pass or a tick) is in a file, in a
  page (live or deleted), in a page's history or in a conflict;
* **no facts detached from their note**: every note still there has its page, at its path's slug, with every
  fact filed for it, and no live page of the folders' slug space holds facts without a note;
* the other host's folder never deleted or took over A's pages.

A note renamed *and* edited while nobody looked keeps nothing that could say it is the same note (another
name, other bytes); the run lets the watcher catch up between the two, as a person's edits leave time for.
`python -m benchmarks.sync_moves_fuzz` runs this with many more examples and records the figures.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

DIRS = ["x", "y", "deep/er"]
OP = st.one_of(
    st.tuples(st.sampled_from(["create"]), st.sampled_from(["", *DIRS]), st.sampled_from("AB")),
    st.tuples(st.sampled_from(["edit", "atomic_save", "delete", "rename", "move_new", "move_existing"]), st.integers(0, 50),
              st.sampled_from(["event", "split"])),
    st.tuples(st.sampled_from(["rename_folder"]), st.integers(0, 50), st.sampled_from("AB")),
    st.tuples(st.sampled_from(["tick", "tick_late", "pass", "kill", "other_host"]), st.just(0), st.just("")),
)
CASE = st.lists(OP, min_size=3, max_size=25)


class Tally:
    def __init__(self) -> None:
        self.cases = 0
        self.ops: Counter = Counter()
        self.outcomes: Counter = Counter()  # pass and tick outcomes, per file
        self.versions = 0  # note versions memverbs saw, each checked
        self.lost_text = 0
        self.detached_facts = 0
        self.other_host_damage = 0
        self.why: list[str] = []


class Note:
    def __init__(self, nid: int, folder: str, rel: str) -> None:
        self.nid, self.folder, self.rel = nid, folder, rel
        self.version = 0
        self.facts = 0
        self.renamed = False  # since memverbs last looked
        self.edited = False

    def text(self) -> str:
        return f"# Note {self.nid}\ntoken-n{self.nid}-v{self.version}\n"


class World:
    """Two synced folders on disk, their watchers, and what memverbs must have kept."""

    def __init__(self, home, base: Path, tally: Tally) -> None:
        from helpers import Client

        from memverbs.server.runtime import Runtime
        from memverbs.server.sync.state import SyncState

        self.base, self.tally = base, tally
        self.roots = {"A": base / "A", "B": base / "B"}
        for root in self.roots.values():
            root.mkdir(parents=True)
            for d in DIRS:
                (root / d).mkdir(parents=True, exist_ok=True)
        self.rt = Runtime(home)
        self.brain = self.rt.brain()
        self.client = Client(self.rt.local_dispatcher())
        self.state = SyncState(self.brain, self.rt.source)
        self.folders = {k: self.state.folder(str(r), "" if k == "A" else "b", "sync") for k, r in self.roots.items()}
        self.notes: list[Note] = []
        self.seen: set[str] = set()  # every note version memverbs saw
        self.next_id = 0
        self.watches = {k: self._watch(k) for k in self.roots}
        self.other_pages: set[str] = set()

    def close(self) -> None:
        self.rt.close()

    def _watch(self, key: str):
        from memverbs.server.context import SYNC_LANE
        from memverbs.server.sync.importer import FolderPass
        from memverbs.server.sync.watcher import Changes, FolderWatch

        fp = FolderPass(self.rt.local_dispatcher(lane=SYNC_LANE), self.brain, self.rt.source, self.folders[key])
        w = FolderWatch(fp, Changes(), lambda report, why: self._count(report))
        w.full_pass("start")
        self._saw(key)
        return w

    def _count(self, report) -> None:
        for outcome, n in report.counts.items():
            self.tally.outcomes[outcome] += n
        unexpected = [f"{rel}: {why}" for rel, why in report.errors if "unexpected" in why]
        self.tally.why += unexpected

    # -- what memverbs saw, and the facts filed once it knew a note ---------------

    def _saw(self, *keys: str) -> None:
        """The folders `keys` (all, without) were just brought up to date: their notes as they are now."""
        from memverbs.server.sync.slugs import slug_for_path

        for note in self.live():
            if keys and note.folder not in keys:
                continue
            path = self.roots[note.folder] / note.rel
            self.seen.add(path.read_text())
            slug = slug_for_path(note.rel, self.folders[note.folder].prefix)
            if note.facts == 0 and self.brain.page(self.rt.source, slug) is not None:
                self.client.ok("remember", fact=f"note {note.nid} matters", provenance="fuzz", entity=slug)
                note.facts = 1
            note.renamed = note.edited = False

    def live(self) -> list[Note]:
        return [n for n in self.notes if n.rel]

    # -- the operations -----------------------------------------------------------

    def event(self, key: str, kind: str, rel: str, old: str | None = None, split: bool = False) -> None:
        """What the observer reports for a change (watcher.make_handler's calls)."""
        changes = self.watches[key].changes
        if kind == "move" and split:
            changes.touch(old)  # the half seen where the note was: a delete
            changes.touch_dir(rel.rsplit("/", 1)[0]) if "/" in rel else changes.touch(rel)
        elif kind == "move":
            changes.move(old, rel)
        elif kind == "folder":
            changes.touch("")
        else:
            changes.touch(rel)

    def pick(self, i: int) -> Note | None:
        live = self.live()
        return live[i % len(live)] if live else None

    def catch_up_if(self, note: Note, renaming: bool) -> None:
        # A rename and an edit of one note while nobody looked leave nothing to pair them by: let the watcher look.
        if (renaming and note.edited) or (not renaming and note.renamed):
            self.tick(note.folder, late=True)

    def run(self, op) -> None:
        name = op[0]
        self.tally.ops[name] += 1
        if name == "create":
            _n, folder_dir, key = op
            nid = self.next_id
            self.next_id += 1
            rel = f"{folder_dir}/n{nid}.md" if folder_dir else f"n{nid}.md"
            note = Note(nid, key, rel)
            self.notes.append(note)
            (self.roots[key] / rel).parent.mkdir(parents=True, exist_ok=True)  # its folder may have been renamed away
            (self.roots[key] / rel).write_text(note.text())
            self.event(key, "touch", rel)
        elif name in ("edit", "atomic_save"):
            note = self.pick(op[1])
            if note is None:
                return
            self.catch_up_if(note, renaming=False)
            note.version += 1
            path = self.roots[note.folder] / note.rel
            if name == "edit":
                path.write_text(note.text())
            else:
                tmp = path.with_name(f".{path.name}.tmp")
                tmp.write_text(note.text())
                os.replace(tmp, path)
            note.edited = True
            self.event(note.folder, "touch", note.rel)
        elif name == "delete":
            note = self.pick(op[1])
            if note is None:
                return
            os.unlink(self.roots[note.folder] / note.rel)
            self.event(note.folder, "touch", note.rel)
            note.rel = ""
        elif name in ("rename", "move_new", "move_existing"):
            note = self.pick(op[1])
            if note is None:
                return
            root = self.roots[note.folder]
            leaf = note.rel.rsplit("/", 1)[-1]
            if name == "rename":
                self.catch_up_if(note, renaming=True)
                leaf = f"n{note.nid}-r{self.next_id}.md"
                self.next_id += 1
                new = f"{note.rel.rsplit('/', 1)[0]}/{leaf}" if "/" in note.rel else leaf
                note.renamed = True
            elif name == "move_new":
                d = f"new{self.next_id}"
                self.next_id += 1
                (root / d).mkdir()
                new = f"{d}/{leaf}"
            else:
                here = note.rel.rsplit("/", 1)[0] if "/" in note.rel else ""
                d = next(d for d in ["", *DIRS] if d != here)
                (root / d).mkdir(parents=True, exist_ok=True)
                new = f"{d}/{leaf}" if d else leaf
            os.rename(root / note.rel, root / new)
            self.event(note.folder, "move", new, note.rel, split=op[2] == "split" and name == "move_new")
            note.rel = new
        elif name == "rename_folder":
            key = op[2]
            root = self.roots[key]
            notes = [n for n in self.live() if n.folder == key and "/" in n.rel]
            if not notes:
                return
            note = notes[op[1] % len(notes)]
            old_dir = note.rel.rsplit("/", 1)[0]
            new_dir = f"ren{self.next_id}"
            self.next_id += 1
            os.rename(root / old_dir, root / new_dir)
            for n in notes:
                if n.rel.startswith(old_dir + "/"):
                    n.rel = new_dir + n.rel[len(old_dir):]
            self.event(key, "folder", "")
        elif name in ("tick", "tick_late"):
            for key in self.roots:
                self.tick(key, late=name == "tick_late")
        elif name == "pass":
            for w in self.watches.values():
                w.full_pass("pass")
            self._saw()
        elif name == "kill":
            self.watches = {k: self._watch(k) for k in self.roots}  # the old ones abandoned mid-flight
        elif name == "other_host":
            self.other_host()

    def tick(self, key: str, *, late: bool) -> None:
        from memverbs.server.sync import watcher

        w = self.watches[key]
        saved = watcher.HOLD_S, watcher.DEBOUNCE_S
        watcher.HOLD_S, watcher.DEBOUNCE_S = (0.0 if late else 3600.0), 0.0
        try:
            w.tick()
        finally:
            watcher.HOLD_S, watcher.DEBOUNCE_S = saved
        self._saw(key)

    def other_host(self) -> None:
        """A teammate's folder at A's very path, on another machine sharing the brain: refused without a
        prefix of its own, synced with one, and A's pages never touched."""
        from memverbs.server.context import SYNC_LANE
        from memverbs.server.sync.importer import FolderPass
        from memverbs.server.sync.state import PrefixChanged, SlugSpaceTaken, SyncState

        a = self.roots["A"]
        aside, theirs = self.base / "A-aside", self.base / "theirs"
        before = {slug for slug, _ in self.brain.live_page_slugs(self.rt.source) if not slug.startswith(("b/", "h2/"))}
        if not theirs.exists():
            theirs.mkdir()
            (theirs / "n0.md").write_text("# Their note\ntheirs\n")
            (theirs / "x").mkdir()
            (theirs / "x" / "n1.md").write_text("# Their other\ntheirs too\n")
        os.environ["MEMVERBS_HOST"] = "teammate-host"
        os.rename(a, aside)
        os.rename(theirs, a)
        try:
            state = SyncState(self.brain, self.rt.source)
            try:
                state.folder(str(a), "", "sync")
                self.tally.other_host_damage += 1
                self.tally.why.append("a second folder took the slug space of A")
            except (SlugSpaceTaken, PrefixChanged):  # the first time A's slugs; after, its own "h2"
                pass
            folder = state.folder(str(a), "h2", "sync")
            fp = FolderPass(self.rt.local_dispatcher(lane=SYNC_LANE), self.brain, self.rt.source, folder)
            fp.run(fp.entries(), follow_deletes=True)
        finally:
            os.rename(a, theirs)
            os.rename(aside, a)
            del os.environ["MEMVERBS_HOST"]
        after = {slug for slug, _ in self.brain.live_page_slugs(self.rt.source) if not slug.startswith(("b/", "h2/"))}
        if before - after:
            self.tally.other_host_damage += 1
            self.tally.why.append(f"the other host's pass deleted {sorted(before - after)}")

    # -- the bars -----------------------------------------------------------------

    def check(self) -> None:
        from memverbs.server.sync.slugs import slug_for_path
        from memverbs.server.timeparse import now_ms

        for w in self.watches.values():
            w.full_pass("settle")
        self._saw()
        kept = [
            r[0] or "" for sql in ("SELECT markdown FROM pages", "SELECT markdown FROM page_versions",
                                   "SELECT brain_content FROM sync_conflicts") for r in self.brain.query(sql)
        ]
        files = [p.read_text() for root in self.roots.values() for p in root.rglob("*.md")]
        everything = "\n".join(kept + files)
        self.tally.versions += len(self.seen)
        for text in self.seen:
            token = text.split("\n")[1]
            if token not in everything:
                self.tally.lost_text += 1
                self.tally.why.append(f"lost: {token}")
        for note in self.live():
            slug = slug_for_path(note.rel, self.folders[note.folder].prefix)
            page = self.brain.page(self.rt.source, slug)
            facts = self.brain.active_fact_count(self.rt.source, slug, world_only=False, now=now_ms()) if page else 0
            if page is None or facts != note.facts:
                self.tally.detached_facts += 1
                self.tally.why.append(f"note {note.nid} at {note.rel}: page {slug} {'missing' if page is None else f'has {facts} facts'}")
        noted = {slug_for_path(n.rel, self.folders[n.folder].prefix) for n in self.live()}
        for slug, _vis in self.brain.live_page_slugs(self.rt.source):
            if slug.startswith("h2/") or slug in noted:
                continue
            if self.brain.active_fact_count(self.rt.source, slug, world_only=False, now=now_ms()):
                self.tally.detached_facts += 1
                self.tally.why.append(f"live page {slug} holds facts but no note is there: an orphan")


def run_case(home, base: Path, case, tally: Tally, source: str) -> None:
    os.environ["MEMVERBS_SOURCE"] = source
    world = World(home, base, tally)
    try:
        for op in case:
            world.run(op)
        world.check()
    finally:
        world.close()
        os.environ.pop("MEMVERBS_SOURCE", None)
        os.environ.pop("MEMVERBS_HOST", None)
        shutil.rmtree(base, ignore_errors=True)
    tally.cases += 1


def fuzz_moves(home, tmp_factory, examples: int, tally: Tally | None = None) -> Tally:
    tally = tally or Tally()
    counter = iter(range(10**9))

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(CASE)
    def one(case):
        before = (tally.lost_text, tally.detached_facts, tally.other_host_damage, len(tally.why))
        run_case(home, tmp_factory(), case, tally, f"fuzz{next(counter)}")
        assert (tally.lost_text, tally.detached_facts, tally.other_host_damage, len(tally.why)) == before, tally.why[-5:]

    one()
    return tally


def test_moves_across_folders_hosts_and_killed_watchers_lose_no_text_and_detach_no_fact(home, tmp_path_factory):
    counter = iter(range(10**9))
    tally = fuzz_moves(home, lambda: tmp_path_factory.mktemp(f"moves{next(counter)}"), 12)
    assert tally.cases >= 12 and tally.lost_text == tally.detached_facts == tally.other_host_damage == 0
    assert tally.ops["move_new"] + tally.ops["move_existing"] > 0
