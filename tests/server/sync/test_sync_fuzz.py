"""Folder sync under hostile folders: random trees with symlinks in and out, odd names, random frontmatter.

Each example builds a synced folder beside an `outside/` tree whose files carry a canary (a `creds.txt`,
a project's `AGENTS.md`, a folder of notes, a facts file), links into it and into `/proc/self`, then runs
a random sequence of what happens to a synced folder: passes of `import` and `sync`, the watcher's
per-file applies, MCP and local `put_page` on the folder's slugs (so write-back runs), a file or a
folder swapped for a link between passes, and an export into a folder that holds links out.

The bars, checked after every example: no canary (nor `/proc/self/status` text) anywhere in the brain
(every text column of every table), every file outside byte-identical with its mtime unchanged and
nothing added or removed there, no `internal` from any tool call and no `unexpected` error in a pass.
`python -m benchmarks.sync_fuzz` runs the same suite with many more examples and records the figures.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaults import write, yaml_bomb

CANARY = "CANARY-sync-fuzz-7d1e"
PROC_MARKERS = ("TracerPid:", "VmPeak:")  # /proc/self/status: no note says these
OUTSIDE = {
    "creds.txt": f"aws_secret = {CANARY}\n",
    "AGENTS.md": f"# Agents\nHouse rules {CANARY}\n",
    "notes/x.md": f"---\ntitle: Outside X\n---\n{CANARY} in a note outside\n",
    "notes/sub/y.md": f"# Y\n{CANARY}\n",
    "facts.jsonl": f'{{"fact": "{CANARY} is a fact", "provenance": "outside"}}\n',
}
LINK_TARGETS_FILE = ["creds.txt", "AGENTS.md", "notes/x.md", "facts.jsonl", "/proc/self/status", "/proc/self/environ"]
LINK_TARGETS_DIR = ["notes", "notes/sub", ".", "/proc/self"]
MTIME_NS = 1_000_000_000

_odd = ["notes", "People", "café", "日本", "a b", "-x", "_y", "new\nline", "tab\there", "CON", "x" * 120, "a.md", "Ünï"]
SEGMENT = st.one_of(
    st.sampled_from(_odd),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="/\x00"), min_size=1, max_size=8),
).filter(lambda s: s not in (".", ".."))
HOSTILE_FRONTMATTER = [
    yaml_bomb(),
    "---\na: &a [*a]\n---\n",
    "---\na: " + "[" * 40 + "]" * 40 + "\n---\n",
    "---\ncreated: 2024-13-45\n---\n",
    "---\nn: " + "9" * 5000 + "\n---\n",
    "---\nratio: .inf\n---\n",
    "---\ntitle: [unclosed\n---\n",
    "---\n- a list\n---\n",
    "---\ntitle: T\n---\n---\nbad: [unclosed\n---\n",
    "---\nvisibility: privat\n---\n",
    "---\nVisibility: private\nvisibility: world\n---\n",
]
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.text(max_size=12))
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
_fm_keys = st.sampled_from(["title", "type", "aliases", "visibility", "summary", "links", "tags", "created", "x y"])


@st.composite
def frontmatter(draw) -> str:
    kind = draw(st.sampled_from(["none", "dict", "hostile", "none", "dict", "raw"]))
    if kind == "hostile":
        return draw(st.sampled_from(HOSTILE_FRONTMATTER))
    if kind == "dict":
        import yaml

        return "---\n" + yaml.safe_dump(draw(st.dictionaries(_fm_keys, _value, max_size=5)), allow_unicode=True) + "---\n"
    if kind == "raw":
        return "---\n" + draw(st.text(max_size=80)) + "\n---\n"
    return ""


@st.composite
def page_text(draw) -> str:
    body = draw(st.text(max_size=120))
    links = draw(st.lists(st.sampled_from(["[[../outside/creds]]", "[[creds]]", "[x](../outside/AGENTS.md)", "[[/proc/self/status]]"]), max_size=2))
    return draw(frontmatter()) + body + "\n" + " ".join(links) + "\n"


ENTRY = st.tuples(
    st.lists(SEGMENT, min_size=1, max_size=3),
    st.sampled_from(["page", "page", "page", "link_file", "link_dir", "link_inside", "dangling", "fifo", "attachment", "facts", "facts_link"]),
    page_text(),
    st.integers(0, 100),
)
ACTION = st.one_of(
    st.sampled_from(["export", "swap_file", "watch", "swap_dir", "sync", "new_link", "import"]).map(lambda a: (a, None)),
    st.tuples(st.sampled_from(["mcp_put", "local_put", "edit", "rename", "delete"]), page_text()),
)
CASE = st.tuples(st.lists(ENTRY, min_size=1, max_size=8), st.lists(ACTION, max_size=6), st.integers(0, 2**16))


class Tally:
    def __init__(self) -> None:
        self.cases = 0
        self.entries: Counter = Counter()  # what the folders held, by kind
        self.actions: Counter = Counter()
        self.files: Counter = Counter()  # pass outcomes, per file
        self.tools: Counter = Counter()  # tool answers, by error code ("ok" for a result)
        self.leaks = 0
        self.outside_touched = 0
        self.internal = 0
        self.why: list[str] = []  # the first few internal answers and unexpected errors, to say what broke


class Counting:
    """A dispatcher that counts what each call answered."""

    def __init__(self, inner, tally: Tally) -> None:
        self.inner, self.tally = inner, tally

    def call(self, tool, params, **kw):
        outcome = self.inner.call(tool, params, **kw)
        code = outcome.body.get("error", "ok") if outcome.is_error else "ok"
        self.tally.tools[f"{tool}: {code}"] += 1
        if code == "internal":
            self.tally.internal += 1
            self.tally.why.append(f"{tool}: {outcome.body.get('message', '')}"[:300])
        return outcome

    def __getattr__(self, name):
        return getattr(self.inner, name)


def make_outside(base: Path) -> Path:
    out = base / "outside"
    for rel, text in OUTSIDE.items():
        write(out / rel, text)
    for path in [*out.rglob("*"), out]:
        os.utime(path, ns=(MTIME_NS, MTIME_NS), follow_symlinks=False)
    return out


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below `root`, never following a link: kind, bytes (files), mtime."""
    seen: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st_ = os.lstat(p)
            data = p.read_bytes() if p.is_file() and not p.is_symlink() else None
            seen[str(p.relative_to(root))] = (st_.st_mode, st_.st_mtime_ns if data is not None else None, data)
    return seen


def brain_leaks(db_path: Path) -> int:
    """Cells in any table's text that hold the canary or /proc text (SQLite: every column of every table)."""
    found = 0
    with sqlite3.connect(db_path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cols = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
            for col in cols:
                for marker in (CANARY, *PROC_MARKERS):
                    try:
                        n = db.execute(f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{col}" AS TEXT), ?) > 0', (marker,)).fetchone()[0]
                    except sqlite3.DatabaseError:
                        continue  # a virtual table's shadow column that cannot be read as text
                    found += n
    return found


def _through_link(root: Path, path: Path) -> bool:
    return any(q.is_symlink() for q in path.parents if root in q.parents)


def build_folder(root: Path, outside: Path, entries, tally: Tally) -> list[str]:
    """Lay out the folder; returns the relative paths made (files, links, FIFOs)."""
    made: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for segments, kind, text, pick in entries:
        name = segments[-1] if kind in ("attachment", "fifo") else (segments[-1] + ".md")
        rel = "/".join([*segments[:-1], name])
        if kind in ("facts", "facts_link"):
            rel = "memverbs-facts.jsonl"
        path = root / rel
        if _through_link(root, path):
            continue  # below a link this case made: creating it would write outside
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                continue
            if kind == "page":
                path.write_text(text, encoding="utf-8", errors="surrogatepass")
            elif kind == "attachment":
                path.write_bytes(text.encode("utf-8", "surrogatepass"))
            elif kind == "facts":
                path.write_text('{"fact": "a fact from inside", "provenance": "fuzz"}\nnot json\n{"fact": NaN}\n', encoding="utf-8")
            elif kind in ("link_file", "facts_link"):
                target = "facts.jsonl" if kind == "facts_link" else LINK_TARGETS_FILE[pick % len(LINK_TARGETS_FILE)]
                os.symlink(target if target.startswith("/") else outside / target, path)
            elif kind == "link_dir":
                target = LINK_TARGETS_DIR[pick % len(LINK_TARGETS_DIR)]
                os.symlink(target if target.startswith("/") else outside / target, root / "/".join(segments))
                rel = "/".join(segments)
            elif kind == "link_inside":
                others = [m for m in made if m != rel]
                os.symlink(root / others[pick % len(others)] if others else root, path)
            elif kind == "dangling":
                os.symlink(root / "no-such-file.md", path)
            elif kind == "fifo":
                os.mkfifo(path)
        except (OSError, UnicodeEncodeError):
            continue  # a name this file system refuses (too long in bytes, a clash with a file): not part of the case
        tally.entries[kind] += 1
        made.append(rel)
    # and in every case, whatever was drawn: a link out to a file, to /proc, to a folder, in a random real folder
    folders = sorted({str(Path(m).parent) for m in made if (root / m).parent.is_dir() and not _through_link(root, root / m)})
    where = root / folders[len(made) % len(folders)] if folders else root
    for name, target, kind in (("creds.md", outside / "creds.txt", "link_file"), ("status.md", Path("/proc/self/status"), "link_file"),
                               ("linked-notes", outside / "notes", "link_dir")):
        if not os.path.lexists(where / name):
            os.symlink(target, where / name)
            tally.entries[kind] += 1
            made.append(str((where / name).relative_to(root)))
    return made


def run_case(base: Path, case, tally: Tally) -> None:
    from helpers import init_home

    from memverbs.server.runtime import Runtime
    from memverbs.server.sync import scan
    from memverbs.server.sync.exporter import export_brain
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.moves import WatchMoves
    from memverbs.server.sync.report import Report
    from memverbs.server.sync.slugs import path_for_slug, slug_for_path
    from memverbs.server.sync.state import SyncState
    from memverbs.server.sync.watcher import Changes, FolderWatch
    from memverbs.server.sync.writeback import write_back

    entries, actions, seed = case
    outside = make_outside(base)
    before = snapshot(outside)
    root = base / "v"
    made = build_folder(root, outside, entries, tally)
    home = init_home(base / "home")
    rt = Runtime(home)
    reports: list[Report] = []
    try:
        brain = rt.brain()
        local = Counting(rt.local_dispatcher(), tally)
        remote = Counting(rt.mcp_dispatcher("full"), tally)

        def folder_pass(mode: str) -> FolderPass:
            folder = SyncState(brain, rt.source).folder(str(root), "", mode)
            return FolderPass(local, brain, rt.source, folder)  # type: ignore[arg-type]

        def one_pass(mode: str) -> None:
            fp = folder_pass(mode)
            report = fp.run(fp.entries(), follow_deletes=mode == "sync")
            if mode == "sync":
                write_back(fp, report)
            reports.append(report)

        one_pass("sync")
        for n, (action, text) in enumerate(actions):
            tally.actions[action] += 1
            files = [m for m in made if (root / m).is_file() and not (root / m).is_symlink() and not _through_link(root, root / m)]
            anything = action == "swap_dir" or (action in ("mcp_put", "local_put") and (seed + n) % 3 == 0)
            rels = (made if anything else files) or made or ["a.md"]
            rel = rels[(seed + n) % len(rels)]
            if action in ("sync", "import"):
                one_pass(action)
            elif action == "watch":
                w = FolderWatch(folder_pass("sync"), Changes(), lambda r, why: reports.append(r))
                report = Report(str(root))
                moves = WatchMoves(w.fp.state, w.fp.folder)
                for r in made:  # as the watcher's tick applies each settled path
                    w.apply(r, None, report, moves)
                for folder in sorted({m.rsplit("/", 1)[0] for m in made if "/" in m}):  # and a new folder: walk it
                    for e in scan.walk(str(root), folder):
                        if e.kind == "page":
                            w.apply(e.rel, None, report, moves)
                write_back(w.fp, report)
                reports.append(report)
            elif action in ("mcp_put", "local_put"):
                caller = remote if action == "mcp_put" else local
                caller.call("put_page", {"slug": slug_for_path(rel), "content": text})
                one_pass("sync")  # write-back of that page, if it has a file
            elif action in ("edit", "rename", "delete"):
                path = root / rel
                if path.is_file() and not path.is_symlink():
                    if action == "edit":
                        path.write_text(text, encoding="utf-8", errors="surrogatepass")
                    elif action == "rename":
                        path.rename(path.with_name(f"renamed-{n}.md"))
                        made.append(str(path.with_name(f"renamed-{n}.md").relative_to(root)))
                    else:
                        path.unlink()
                    one_pass("sync")
            elif action == "swap_file":
                path = root / rel
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    os.symlink(outside / LINK_TARGETS_FILE[(seed + n) % 4], path)
                    one_pass("sync")
            elif action == "swap_dir":
                if "/" in rel and not (root / rel.split("/")[0]).is_symlink():
                    top = rel.split("/")[0]
                    os.rename(root / top, base / f"moved-{n}")
                    os.symlink(outside / "notes", root / top)
                    local.call("put_page", {"slug": slug_for_path(rel), "content": f"# Swapped {n}\n"})
                    one_pass("sync")
            elif action == "new_link":
                os.symlink(outside / "creds.txt", root / f"creds-{n}.md")
                os.symlink(outside / "notes", root / f"linked-{n}")
                one_pass("sync")
            elif action == "export":
                dest = base / f"export-{n}"
                dest.mkdir()
                for i, (slug, _vis) in enumerate(brain.live_page_slugs(rt.source)):
                    target = dest / path_for_slug(slug)
                    if i % 2 == 0 and not os.path.lexists(target):
                        try:
                            target.parent.mkdir(parents=True, exist_ok=True)
                            os.symlink(outside / "AGENTS.md", target)
                        except OSError:
                            pass
                os.symlink(outside / "notes", dest / "linked-dir")
                os.symlink(outside / "facts.jsonl", dest / "memverbs-facts.jsonl")
                export_brain(brain, rt.source, str(dest), include_private=bool(seed % 2))
    finally:
        rt.close()
    for report in reports:
        for outcome, count in report.counts.items():
            tally.files[outcome] += count
        unexpected = [f"{rel}: {why}"[:300] for rel, why in report.errors if "unexpected" in why]
        tally.internal += len(unexpected)
        tally.why += unexpected
    tally.leaks += brain_leaks(home.root / "brain.db")
    after = snapshot(outside)
    tally.outside_touched += sum(1 for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    tally.cases += 1


def fuzz_sync(tmp_factory, examples: int) -> Tally:
    tally = Tally()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(CASE)
    def one(case):
        # Judged on this case's own counts: the tally runs across cases, and a failure that stayed in
        # it would fail every later case and leave hypothesis shrinking to an innocent one.
        before = (tally.leaks, tally.outside_touched, tally.internal)
        run_case(tmp_factory(), case, tally)
        assert (tally.leaks, tally.outside_touched, tally.internal) == before, tally.why[:5] or vars(tally)

    one()
    return tally


def test_sync_never_reads_or_writes_outside_its_folder(tmp_path_factory):
    counter = iter(range(10**9))
    tally = fuzz_sync(lambda: tmp_path_factory.mktemp(f"case{next(counter)}"), 25)
    assert tally.cases >= 25 and tally.leaks == tally.outside_touched == tally.internal == 0
    assert tally.entries["link_file"] + tally.entries["link_dir"] > 0  # the links were really there
