"""`memverbs import`, `export` and `sync`: a markdown folder and the brain (docs/sync.md).

Progress goes to stderr: a rich progress bar on a terminal, otherwise a plain line
every few seconds and one per problem. The summary (or `--json`) goes to stdout.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.server.context import SYNC_LANE
from memverbs.server.plural import plural
from memverbs.server.runtime import Runtime
from memverbs.server.sync.conflicts import said

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memverbs.cli.argparser import Parser
    from memverbs.server.brain.base import Brain
    from memverbs.server.sync.backup_check import CheckedBackup
    from memverbs.server.sync.report import Report
    from memverbs.server.sync.state import Folder, SyncState


def add_parsers(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register import / export / sync; `add` is build_parser's (it puts each command in the grouped help)."""
    p = add(sub, "import", "turn a folder of markdown (an Obsidian vault, exported pages) into pages")
    p.add_argument("dir", metavar="DIR", help="the folder to read")
    _pass_options(p)
    p.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    p.add_argument("--person", action="append", default=[], metavar="FROM=TO",
                   help="a full export's person FROM (a name, owner, or #ID) restored as TO (a name, or owner: their rows "
                        "become the owner's); repeatable. Without it people are restored as they were")
    p.add_argument("--role", action="append", default=[], metavar="NAME=ROLE",
                   help="a full export's person NAME restored acting as the Postgres role ROLE (empty: none); repeatable")

    p = add(sub, "export", "write every page to its note's path (or DIR/<slug>.md) and the facts to DIR/memverbs-facts.jsonl")
    p.add_argument("dir", metavar="DIR", help="the folder to write (created if missing)")
    p.add_argument("--include-private", action="store_true", help="also write private pages, private facts-fence rows and private facts")
    p.add_argument("--full", action="store_true",
                   help="a full backup: also the brain's history (fact times, supersession, moves, audit, page versions, "
                        "people) in DIR/.memverbs-backup, which `memverbs import DIR` restores exactly; includes your private "
                        "material, not other people's")
    p.add_argument("--all-people", action="store_true",
                   help="with --full: every person's rows, their private material included (the brain's owner only): "
                        "the whole brain, for a restore of the team's brain")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = add(sub, "sync", "keep a markdown folder and the brain in step: one pass, or --watch")
    p.add_argument("dir", nargs="?", metavar="DIR", help="the folder (omit with --status; with --watch: every folder synced before)")
    _pass_options(p)
    p.add_argument("--watch", action="store_true", help="stay up: apply file changes within a second, write brain changes back")
    p.add_argument("--status", action="store_true",
                   help="show the synced folders, what is pending, failing files and each conflict with a diff")
    p.add_argument("--resolve", metavar="NOTE",
                   help="settle a note's open conflict (NOTE: its file, path in the folder, slug or #id); needs --keep")
    p.add_argument("--keep", choices=("file", "brain", "both"), metavar="SIDE",
                   help="with --resolve: file (the file's version stays), brain (the kept brain version comes back) "
                        "or both (the file gets both, between conflict markers)")


def _folder_and_prefix(args: argparse.Namespace) -> tuple[str, str | None] | int:
    """DIR and --prefix checked: (root, prefix; None when not given: the folder's own from before), or
    the exit status after the error."""
    root = _folder_arg(args.dir)
    if root is None:
        return fail(f"{args.dir} is not a folder", "Pass the path of a folder of markdown files.")
    if args.prefix is None:
        return root, None
    prefix = _check_prefix(args.prefix)
    if prefix is None:
        return fail(f'--prefix "{args.prefix}" is not a slug prefix',
                    'Use lowercase path segments of a-z, 0-9, "-" and "_", e.g. --prefix notes.')
    return root, prefix


def _pass_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", metavar="PREFIX",
                   help="slug prefix for this folder's pages, e.g. notes (default: the one it was synced with, else none)")
    p.add_argument("--max-bytes", type=int, default=None, metavar="BYTES", help="skip files larger than this (default 2 MiB)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


class Progress:
    """A rich bar on a terminal (imported only then), plain lines otherwise; problems always get a line."""

    def __init__(self, total: int, label: str, *, quiet: bool = False) -> None:
        self.total, self.done, self.label, self.quiet = total, 0, label, quiet
        self.bar = None
        self.last = time.monotonic()
        if not quiet and sys.stderr.isatty():
            from rich.console import Console  # noqa: PLC0415
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn  # noqa: PLC0415
            from rich.progress import Progress as Bar  # noqa: PLC0415

            self.bar = Bar(
                TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True,
            )
            self.task = self.bar.add_task(label, total=total)
            self.bar.start()

    def step(self, rel: str, outcome: str, why: str = "") -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1)
        elif not self.quiet and time.monotonic() - self.last >= 2:
            self.last = time.monotonic()
            print(f"memverbs: {self.label} {self.done}/{self.total}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _runtime():
    runtime = Runtime()
    return runtime, runtime.brain()


def _folder_arg(path: str) -> str | None:
    if not os.path.isdir(path):
        return None
    return os.path.realpath(path)


def _unreadable(root: str) -> int | None:
    """A folder this process cannot list is not read at all (its pages are kept): the exit status, said."""
    try:
        with os.scandir(root) as it:
            next(it, None)
    except OSError as exc:
        return fail(f"cannot read {root}: {exc.strerror}",
                    "Nothing was changed: its pages are kept as they are. Make the folder readable (chmod u+rx) and run this again.")
    return None


def _check_prefix(prefix: str) -> str | None:
    from memverbs.server.sync.slugs import valid_prefix  # noqa: PLC0415

    prefix = prefix.strip().strip("/")
    return prefix if valid_prefix(prefix) else None


def run_import(args: argparse.Namespace) -> int:
    return _one_pass(args, mode="import", follow_deletes=False)


def _one_pass(args: argparse.Namespace, *, mode: str, follow_deletes: bool) -> int:
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync.importer import MAX_BYTES, FolderPass  # noqa: PLC0415
    from memverbs.server.sync.state import SyncState  # noqa: PLC0415

    checked = _folder_and_prefix(args)
    if isinstance(checked, int):
        return checked
    root, prefix = checked
    refused = _unreadable(root)
    if refused is not None:
        return refused
    try:
        runtime, brain = _runtime()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        dry_run = bool(getattr(args, "dry_run", False))
        restored = _restore_first(brain, root, prefix, args, dry_run=dry_run) if mode == "import" else None
        folder = SyncState(brain, runtime.source).folder(root, prefix, mode) if not dry_run else _peek_folder(brain, runtime.source, root, prefix, mode)
        pass_ = FolderPass(runtime.local_dispatcher(lane=SYNC_LANE), brain, runtime.source, folder, dry_run=dry_run,
                           max_bytes=args.max_bytes or MAX_BYTES, restored=restored.notes if restored is not None else None)
        entries = pass_.entries()
        progress = Progress(len(entries), "importing" if mode == "import" else "syncing", quiet=args.json)
        try:
            report = pass_.run(entries, follow_deletes=follow_deletes, progress=progress.step)
        finally:
            progress.close()
        if mode == "sync":
            from memverbs.server.sync.writeback import write_back  # noqa: PLC0415

            write_back(pass_, report)
        if restored is not None:
            _verify_restore(brain, restored, report, dry_run=dry_run)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    if args.json:
        print_json(report.as_dict())
    else:
        print_report(report)
    return 1 if report.errors or report.unavailable is not None else 0


def _restore_first(brain: Brain, root: str, prefix: str | None, args: argparse.Namespace, *, dry_run: bool) -> CheckedBackup | None:
    """A full export's backup (`export --full`) goes into the brain before its notes are read,
    checked whole and restored in one transaction (server/sync/restore.py); None for a folder
    without one. A dry run only checks that it would restore."""
    from memverbs.server.errors import BrainError  # noqa: PLC0415
    from memverbs.server.sync.backup import has_backup  # noqa: PLC0415
    from memverbs.server.sync.backup_check import PeopleMap  # noqa: PLC0415
    from memverbs.server.sync.restore import check_restore, restore_backup  # noqa: PLC0415
    from memverbs.server.sync.scan import BACKUP_DIR  # noqa: PLC0415

    if not has_backup(root):
        if args.person or args.role:
            raise BrainError(f"--person and --role map a full export's people, and {root} has no {BACKUP_DIR}",
                             "Leave them out to import the notes, or import the folder of a full export.")
        return None
    if prefix:
        raise BrainError(f"a full export ({BACKUP_DIR}) is imported as it was exported, without --prefix",
                         "Run the import again without --prefix.")
    people = PeopleMap(args.person, args.role)
    if dry_run:
        return check_restore(brain, root, people)
    checked, _ = restore_backup(brain, root, people)
    return checked


def _verify_restore(brain: Brain, checked: CheckedBackup, report: Report, *, dry_run: bool) -> None:
    """After the notes pass: every restored table against the backup, as `migrate` verifies a copy
    (the restore itself was verified before it committed; a note edited since the export changes its page)."""
    from memverbs.server.sync.restore import verify_restore  # noqa: PLC0415

    if dry_run:
        report.restore = {"would_restore": checked.would_restore(), "people": checked.renamed}
        return
    tables = verify_restore(brain, checked)
    report.restore = {"ok": all(t.ok for t in tables), "verify": [dict(t.__dict__, ok=t.ok) for t in tables],
                      "people": checked.renamed}
    for t in tables:
        if not t.ok:
            report.errors.append((f"restore: {t.table}", f"{t.target_rows} rows after the import, {t.source_rows} in the backup "
                                  "(or the rows differ): the folder's notes changed it after the restore (a note edited "
                                  "since the export?); the brain is not an exact copy"))


def _peek_folder(brain: Brain, source: str, root: str, prefix: str | None, mode: str) -> Folder:
    """A dry run writes nothing, not even the folder's row: use the row if there is one."""
    from memverbs.server.sync.state import Folder, SyncState  # noqa: PLC0415

    for f in SyncState(brain, source).folders():
        if f.root == root:
            return Folder(f.id, root, f.prefix if prefix is None else prefix, f.mode, f.last_pass_at, f.last_change_at,
                          f.watcher_pid, f.watcher_beat)
    return Folder(-1, root, prefix or "", mode, None, None, None, None)


def print_report(report: Report) -> None:
    where = f"{report.folder}" + (f" (prefix {report.prefix})" if report.prefix else "")
    print(f"{where}: {report.summary()}")
    for rel, why in report.skipped:
        print(f"  skipped {rel}: {why}")
    for rel, why in report.errors:
        print(f"  error   {rel}: {why}")
    if report.unavailable is not None:
        print(f"  not read: {report.unavailable}. Nothing was applied or deleted: its pages are kept as they are, and the "
              "folder is taken up again once it is back (memverbs sync --status)")
    for rel, slug, cause in report.conflicts:
        print(f"  conflict {rel}: {said(cause, slug)} (memverbs sync --status)")
    if report.restore is not None:
        if "verify" in report.restore:
            rows = sum(t["target_rows"] for t in report.restore["verify"])
            bad = [t["table"] for t in report.restore["verify"] if not t["ok"]]
            print(f"  restored {len(report.restore['verify'])} tables from the backup ({plural(rows, 'row')}): "
                  + ("every table matches it, as migrate verifies" if not bad else
                     f"the restore matched it; the notes changed {', '.join(bad)} since"))
        else:
            rows = sum(report.restore["would_restore"].values())
            print(f"  would restore {len(report.restore['would_restore'])} tables from the backup ({plural(rows, 'row')})")
        for line in report.restore.get("people", []):
            print(f"  people: {line}")
    f = report.facts
    if any(f.values()):
        print(f"  facts: {f.get('inserted', 0)} new, {f.get('duplicate', 0)} already known, {f.get('superseded', 0)} superseding, "
              f"{plural(f.get('errors', 0), 'error')}")


def print_left_out(left_out: dict) -> None:
    """What a full backup left out, and why: the tables no backup holds, and other people's rows."""
    why: dict[str, list[str]] = {}
    for table, reason in left_out.get("tables", {}).items():
        why.setdefault(reason, []).append(table)
    for reason, tables in why.items():
        print(f"  left out: {', '.join(tables)} ({reason})")
    others = left_out.get("other_people")
    if others is None:
        print("  every person's rows included, private ones too: keep this backup as you keep the brain")
        return
    cut = {t: n for t, n in others["rows"].items() if n}
    texts = {t: n for t, n in others["texts_cut"].items() if n}
    if cut or texts or others["supersessions_cleared"]:
        whose = ", ".join(others["people"]) or "other people"
        print(f"  left out, {whose}'s private material: "
              + ", ".join([f"{n} {t} rows" for t, n in cut.items()] + [f"[private] rows cut from {n} {t} texts" for t, n in texts.items()]
                          + ([f"{others['supersessions_cleared']} supersessions by them cleared"] if others["supersessions_cleared"] else [])))
    if others["hidden_by_the_database"]:
        print("  left out: other people's private rows, which the database does not show this login (not counted)")
    if cut or texts or others["hidden_by_the_database"]:
        print(f"  ({others['why']})")


def run_export(args: argparse.Namespace) -> int:
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync.exporter import export_brain  # noqa: PLC0415

    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        return fail(f"{args.dir} is a file", "Pass a folder to export into (it is created if missing).")
    try:
        runtime, brain = _runtime()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        if args.all_people and not args.full:
            return fail("--all-people is for a full backup", "Add --full: `memverbs export DIR --full --all-people`.", code=2)
        report = export_brain(brain, runtime.source, args.dir, include_private=args.include_private or args.full,
                              full=args.full, everyone=args.all_people)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    except OSError as exc:
        return fail(f"cannot write {args.dir}: {exc.strerror}", "Check that the folder is writable.")
    finally:
        runtime.close()
    if args.json:
        print_json(report.as_dict())
    else:
        print(f"{report.folder}: {plural(report.pages, 'page')} ({report.unchanged} already current), {plural(report.facts, 'fact')}")
        if report.attachments or report.attachments_missing:
            print(f"  attachments: {report.attachments} copied beside their notes"
                  + (f", {len(report.attachments_missing)} not found (the brain keeps notes' text, not attachments' bytes; "
                     "their synced folder no longer has them)" if report.attachments_missing else ""))
        if report.backup is not None:
            print(f"  full backup in {report.folder}/.memverbs-backup: {plural(len(report.backup), 'table')}, "
                  f"{plural(sum(report.backup.values()), 'row')} (`memverbs import {args.dir}` into a new brain restores it)")
            print_left_out(report.backup_left_out or {})
        if args.include_private and not args.full:
            print("  private material included: private pages, private facts-fence rows and private facts")
        elif not args.full:  # a full export's lines above say whose private material is in it
            left = (report.private_pages_left_out, report.private_rows_left_out, report.private_facts_left_out)
            print(
                f"  private material left out: {plural(left[0], 'private page')}, private rows cut from "
                f"{plural(left[1], 'page')}, {plural(left[2], 'private fact')} (--include-private to export them)"
            )
        for rel, why in report.errors:
            print(f"  error {rel}: {why}")
    return 1 if report.errors else 0


def run_sync(args: argparse.Namespace) -> int:
    if args.resolve is not None or args.keep is not None:
        return run_resolve(args)
    if args.status:
        return run_status(args)
    if args.watch:
        return run_watch(args)
    if not args.dir:
        return fail("sync needs a folder", "Run `memverbs sync DIR`, `memverbs sync --watch` (every synced folder) or `memverbs sync --status`.")
    return _one_pass(args, mode="sync", follow_deletes=True)


def run_watch(args: argparse.Namespace) -> int:
    """Watch DIR (or, without one, every folder synced before) until Ctrl-C / SIGTERM; a line per applied change."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync.importer import MAX_BYTES, FolderPass  # noqa: PLC0415
    from memverbs.server.sync.state import STALE_MS, SyncState  # noqa: PLC0415
    from memverbs.server.sync.watcher import Changes, FolderWatch, watch  # noqa: PLC0415

    root: str | None = None
    prefix: str | None = None
    if args.dir:
        checked = _folder_and_prefix(args)
        if isinstance(checked, int):
            return checked
        root, prefix = checked
    try:
        runtime, brain = _runtime()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        state = SyncState(brain, runtime.source)
        if root is not None:
            folders = [state.folder(root, prefix, "sync")]
            holder = state.claim_watch(folders[0])
            if holder is not None:
                return fail(f"{root} is already watched, by {holder}",
                            "One watcher per folder: stop that one first. A watcher that was killed is taken over "
                            f"once its heartbeat is {STALE_MS // 1000} s old (at once on this machine).")
        else:
            folders = _this_hosts_folders(state)
            if not folders:
                return fail("no synced folders of this machine to watch",
                            "Run `memverbs sync DIR --watch` (with --prefix P) for a folder first.")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())

        def on_report(report: Report, why: str) -> None:
            if args.json:
                import json  # noqa: PLC0415

                print(json.dumps({"event": why, **report.as_dict()}, ensure_ascii=False), flush=True)
                return
            if (why == "start" or report.changed or report.counts["written_back"] or report.errors or report.skipped
                    or report.unavailable is not None):
                print(f"[{time.strftime('%H:%M:%S')}] {report.folder} {why}: {report.summary()}", flush=True)
                for rel, why_ in report.skipped + report.errors:
                    print(f"  {rel}: {why_}", flush=True)
                for rel, slug, cause in report.conflicts:
                    print(f"  conflict {rel}: {said(cause, slug)}", flush=True)
                if report.unavailable is not None:
                    print(f"  not read: {report.unavailable}; its pages are kept, and it is watched again once it is back",
                          flush=True)

        watches = []
        for folder in folders:
            fp = FolderPass(runtime.local_dispatcher(lane=SYNC_LANE), brain, runtime.source, folder, max_bytes=args.max_bytes or MAX_BYTES)
            watches.append(FolderWatch(fp, Changes(), on_report))
            where = f" as {folder.prefix}/" if folder.prefix else ""
            print(f"memverbs: watching {folder.root}{where} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        watch(watches, lambda m: print(f"memverbs: {m}", file=sys.stderr, flush=True), stop)
    except KeyboardInterrupt:
        pass
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    return 0


def _this_hosts_folders(state: SyncState) -> list[Folder]:
    """`sync --watch` alone: the synced folders of this machine that nobody watches yet, claimed. A folder
    synced from another machine (a teammate's, at a path that may exist here too) is never adopted, nor is
    a folder now at a synced one's path that is not that folder (its .memverbs/folder.json says another id)."""
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync.identity import read_id  # noqa: PLC0415

    out = []
    for folder in state.folders("sync"):
        if not folder.here():
            print(f"memverbs: not watching {folder.root}: it is synced from {folder.host} "
                  "(`memverbs sync DIR --watch` watches it from here)", file=sys.stderr)
            continue
        if not os.path.isdir(folder.root):
            continue
        if folder.uid is not None and read_id(folder.root) != folder.uid:
            print(f"memverbs: not watching {folder.root}: the folder there is not the one synced from that path "
                  "(its .memverbs/folder.json has another id; `memverbs sync DIR --watch` syncs it as a folder of its own)",
                  file=sys.stderr)
            continue
        try:
            folder = state.folder(folder.root, folder.prefix, "sync")  # a folder from before ids gets its id here
        except MemverbsError as exc:
            print(f"memverbs: not watching {folder.root}: {exc.message}", file=sys.stderr)
            continue
        holder = state.claim_watch(folder)
        if holder is not None:
            print(f"memverbs: not watching {folder.root}: already watched, by {holder}", file=sys.stderr)
            continue
        out.append(folder)
    return out


def run_status(args: argparse.Namespace) -> int:
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync.status import folder_status  # noqa: PLC0415

    try:
        runtime, brain = _runtime()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        rows = folder_status(brain, runtime.source, with_sides=True)
    finally:
        runtime.close()
    if args.json:
        print_json({"folders": rows})
        return 0
    if not rows:
        print("no synced or imported folders (memverbs sync DIR)")
    for r in rows:
        prefix = f" → {r['prefix']}/" if r["prefix"] else ""
        watch = f"watched by pid {r['watcher_pid']}" if r["watching"] else "not watched"
        if not r["here"]:
            watch += f", synced from {r['host']}"
        print(f"{r['root']}{prefix} [{r['mode']}, {watch}] {plural(r['files'], 'file')}, last pass {r['last_pass_at'] or 'never'}, lag {r['lag']}")
        if r["unavailable"]:
            print(f"  unavailable since {r['unavailable_since']}: {r['unavailable']}; its pages are kept as they are, "
                  "and it is taken up again once it is back")
        if not r["here"]:
            for c in r["conflicts"]:
                print(f"  conflict #{c['id']} {c['file']} ({c['slug']}): {c['said']}; settle it on {r['host']}, where the file is")
            continue  # its files are on that machine: nothing here to compare them with
        print(f"  pending: {plural(r['pending_files'], 'changed or new file')}, {r['pending_deletes']} deleted, "
                  f"{plural(r['pending_write_back'], 'page')} to write back")
        for f in r["failing_files"]:
            print(f"  failing {f['file']} since {f['since']}: {f['reason']} (fix the file and save it)")
        for x in r["stranded_facts"]:
            print(f"  {plural(x['facts'], 'fact')} filed under {x['slug']}, a page that left with its note (moved into "
                  f"another folder?): refile with `memverbs move-facts {x['slug']} NEW-SLUG`")
        for o in r["orphans"]:
            print(f"  orphan {o['slug']} ({plural(o['facts'], 'fact')}): its note is now {o['moved_to']} ({o['moved_to_slug']}); "
                  f"refile with `memverbs move-facts {o['slug']} {o['moved_to_slug']}`, then delete the page")
        for c in r["conflicts"]:
            print(f"  conflict #{c['id']} {c['file']} ({c['slug']}) at {c['detected_at']}: {c['said']}")
            _print_sides(c)
            print(f"    settle it: memverbs sync --resolve {c['file']} --keep file|brain|both")
    return 0


DIFF_LINES = 40  # per conflict on a terminal; --json has both sides in full


def _print_sides(c: dict) -> None:
    if c["file_content"] is None:
        print(f"    the file: {c['file_problem']}")
        print(f"    the brain's kept version: {len(c['brain_content'].encode()):,} bytes")
        return
    lines = c["diff"].splitlines()
    if not lines:
        print("    the file now holds the brain's version (the same text): --keep file settles it")
        return
    for line in lines[:DIFF_LINES]:
        print(f"    {line}")
    if len(lines) > DIFF_LINES:
        print(f"    … {len(lines) - DIFF_LINES} more diff lines (memverbs sync --status --json has both sides in full)")


def run_resolve(args: argparse.Namespace) -> int:
    """`sync --resolve NOTE --keep file|brain|both`: settle one note's open conflict."""
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415
    from memverbs.server.sync import conflicts  # noqa: PLC0415

    if args.resolve is None or args.keep is None:
        return fail("--resolve and --keep go together", "Run `memverbs sync --resolve NOTE --keep file|brain|both`.", code=2)
    try:
        runtime, brain = _runtime()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        settled = conflicts.settle(runtime.local_dispatcher(), brain, runtime.source, args.resolve, args.keep, max_bytes=args.max_bytes)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    if args.json:
        print_json({"resolved": settled.ids, "file": settled.rel_path, "slug": settled.slug, "kept": settled.kept})
    else:
        ids = ", ".join(f"#{i}" for i in settled.ids)
        print(f"settled {ids}: {settled.done}")
        if args.keep != "file":
            print(f"  the text it replaced is in the page's history: memverbs page-history {settled.slug}")
    return 0
