"""What `sync --status` and `doctor` say about synced folders: pending work, lag, conflicts."""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

from memverbs.server.sync import scan
from memverbs.server.sync.conflicts import cause_of, describe, said
from memverbs.server.sync.new_files import unfiled
from memverbs.server.sync.state import FileState, Folder, SyncState, live_holder
from memverbs.server.timeparse import iso, now_ms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memverbs.server.brain.base import Brain
    from memverbs.server.brain.location import BrainLocation

def watching(folder: Folder) -> bool:
    return live_holder(folder) is not None


def folder_status(brain: Brain, source: str, *, scan_files: bool = True, with_sides: bool = False,
                  failures: bool = True) -> list[dict]:
    """Each folder's state; `with_sides`: each open conflict with both sides and the diff (`sync --status`);
    `failures` False: a brain from before failing files were kept apart (doctor never migrates)."""
    state = SyncState(brain, source)
    out = []
    now = now_ms()
    file_slugs: set[str] | None = None
    folders = state.folders()
    for folder in folders:
        known = state.files(folder)
        failed_files = state.failures(folder) if failures else {}
        pending, oldest, present, failing = 0, None, set(), []
        here = folder.here()  # another machine's folder: its path names nothing here, even where it exists
        if scan_files and here and os.path.isdir(folder.root):
            for e in scan.walk(folder.root):
                if e.kind not in ("page", "facts"):
                    continue
                present.add(e.rel)
                prev = known.get(e.rel)
                try:
                    st = os.stat(e.path)
                except OSError:
                    continue
                failed = failed_files.get(e.rel)
                if failed is not None and (st.st_size, st.st_mtime_ns) == (failed.size, failed.mtime_ns):
                    # Failing as it stands: only an edit changes that, so it is named, not counted as lag.
                    failing.append({"file": e.rel, "outcome": failed.outcome, "reason": failed.reason,
                                    "since": iso(failed.first_at)})
                    continue
                if prev is None or (st.st_size, st.st_mtime_ns) != (prev.size, prev.mtime_ns):
                    pending += 1
                    mtime = st.st_mtime_ns // 1_000_000
                    oldest = mtime if oldest is None else min(oldest, mtime)
        deletes = len([r for r in known if r not in present]) if scan_files and here else 0
        conflicts = state.conflicts(folder)
        orphaned: list[dict] = []
        left: list[dict] = []
        if folder.mode == "sync" and failures:
            if file_slugs is None:
                file_slugs = brain.sync_all_file_slugs(source)
            orphaned = orphans(brain, source, folder, known, file_slugs)
            left = stranded(brain, source, folder, now)
        out.append(
            {
                "root": folder.root,
                "prefix": folder.prefix,
                "mode": folder.mode,
                "host": folder.host,
                "here": here,
                "exists": os.path.isdir(folder.root) if here else None,
                # Marked by the last pass or watcher that could not read it: nothing in it is deleted meanwhile.
                "unavailable_since": iso(folder.unavailable_at),
                "unavailable": folder.unavailable_reason if folder.unavailable_at is not None else None,
                "files": len([f for f in known.values() if f.slug]),
                "watching": watching(folder),
                "watcher_pid": folder.watcher_pid,
                "last_pass_at": iso(folder.last_pass_at),
                "last_change_at": iso(folder.last_change_at),
                "pending_files": pending,
                "pending_deletes": deletes,
                # Pages to write to their files, and pages born in the brain waiting for a file of their own.
                "pending_write_back": len(brain.sync_due(source, folder.id))
                + (len(unfiled(brain, source, folder, folders)) if failures else 0),
                "lag_ms": max(0, now - oldest) if oldest is not None else 0,
                "lag": _human(max(0, now - oldest)) if oldest is not None else "none",
                "failing_files": failing,
                "orphans": orphaned,
                "stranded_facts": left,
                "conflicts": [
                    {"id": c["id"], "file": c["rel_path"], "slug": c["slug"], "detected_at": iso(c["detected_at"]),
                     "cause": cause_of(c), "said": said(cause_of(c), c["slug"]),
                     **(describe(folder.root, c, elsewhere=None if here else folder.host) if with_sides else {})}
                    for c in conflicts
                ],
            }
        )
    return out


def orphans(brain: Brain, source: str, folder: Folder, known: dict[str, FileState], file_slugs: set[str]) -> list[dict]:
    """Pages of the folder's slug space whose note is gone while the page stayed live, with the facts on it:
    a live page no file maps to, whose text or name a note of the folder now has (the note moved and a
    memverbs from before moves kept identity made it a second page). A page an agent made under the
    prefix, with no note of that text or name, is not one."""
    by_hash: dict[str, str] = {}
    by_name: dict[str, list[str]] = {}
    for f in known.values():
        if f.slug:
            by_hash.setdefault(f.file_hash, f.rel_path)
            by_name.setdefault(f.slug.rsplit("/", 1)[-1], []).append(f.rel_path)
    space = folder.prefix + "/" if folder.prefix else ""
    out = []
    for slug, _vis in brain.live_page_slugs(source):
        if not slug.startswith(space) or slug in file_slugs:
            continue
        page = brain.page(source, slug)
        text = (page["markdown"] if page is not None else None) or ""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        names = by_name.get(slug.rsplit("/", 1)[-1], [])
        moved_to = by_hash.get(digest) or (names[0] if len(names) == 1 else None)
        if moved_to is None:
            continue
        facts = brain.active_fact_count(source, slug, world_only=False, now=now_ms())
        out.append({"slug": slug, "facts": facts, "moved_to": moved_to,
                    "moved_to_slug": known[moved_to].slug})
    return out


def stranded(brain: Brain, source: str, folder: Folder, now: int) -> list[dict]:
    """Facts of the folder's slug space filed under a slug that has no page at all: its page moved away
    with a note that went into another synced folder, and these are the facts its new folder's person
    could not see to take along (another person's private facts: server/sync/crossing.py)."""
    if not folder.prefix:
        return []  # a folder without a prefix shares the slug space with every entity of the brain
    out = []
    for row in brain.entities(source, now, with_page=False, prefix=folder.prefix + "/"):
        if row["active"] and not brain.page_changes(source, 0, entity=row["slug"], limit=1):
            out.append({"slug": row["slug"], "facts": int(row["active"])})
    return out


def _some(items: Iterable[str], shown: int = 5) -> str:
    items = list(items)
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _human(ms: int) -> str:
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def sync_checks(where: BrainLocation, source: str) -> list[tuple[str, str, str, str | None]]:
    """doctor's rows: one per synced or imported folder (lag, watcher, conflicts), read-only."""
    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.errors import MemverbsError  # noqa: PLC0415

    if where.exists() is False:
        return []
    try:
        brain = open_brain(where, read_only=True, pool_size=1)
    except MemverbsError:
        return []  # the brain's own check says why
    try:
        # A brain from before markdown folders has no sync tables (doctor never migrates).
        applied = brain.schema_status()["applied"]
        if not any(name.endswith("_markdown_sync_state") for name in applied):
            return []
        rows = folder_status(brain, source, failures=any(name.endswith("_page_history") for name in applied))
    except MemverbsError as exc:
        return [("sync", "warn", f"cannot read the sync state: {getattr(exc, 'message', exc)}", "Run `memverbs doctor` again; if it persists, `memverbs init`.")]
    finally:
        brain.close()
    out: list[tuple[str, str, str, str | None]] = []
    for r in rows:
        name = f"sync {r['root']}"
        if not r["here"]:
            out.append((name, "ok", f"{r['mode']}, synced from {r['host']} (not this machine), {r['files']} files", None))
            continue
        if r["unavailable"] or not r["exists"]:
            why = r["unavailable"] or "the folder is gone"
            out.append((name, "warn", f"{why}; its notes' pages ({r['files']}) are kept as they are (nothing is deleted "
                        "while it cannot be read)",
                        f"Put the folder back at {r['root']} (mount its drive, restore its permissions): the next pass "
                        "or the watcher takes it up again. If it is gone for good, delete its pages yourself."))
            continue
        watch = "watched" if r["watching"] else "not watched"
        pending = r["pending_files"] + r["pending_deletes"] + r["pending_write_back"]
        detail = f"{r['mode']}, {watch}, {r['files']} files, lag {r['lag']}, {pending} pending"
        if r["conflicts"] or r["failing_files"]:
            # Outstanding until someone acts: doctor fails (exit 1) and names each, with the fix.
            said, fixes = [], []
            if r["conflicts"]:
                said.append(f"{len(r['conflicts'])} conflict(s): " + _some(f"{c['file']} (#{c['id']})" for c in r["conflicts"]))
                fixes.append("see both sides with `memverbs sync --status`, settle each with "
                             "`memverbs sync --resolve NOTE --keep file|brain|both`")
            if r["failing_files"]:
                said.append(f"{len(r['failing_files'])} file(s) failing: "
                            + _some(f"{f['file']} ({f['reason']})" for f in r["failing_files"]))
                fixes.append("fix each failing file (the reason is given) and save it: the next pass applies it")
            fix = "; ".join(fixes)
            out.append((name, "fail", f"{detail}; " + "; ".join(said), fix[0].upper() + fix[1:] + "."))
        elif r["stranded_facts"]:
            named = _some(f"{x['slug']} ({x['facts']} fact{'' if x['facts'] == 1 else 's'})" for x in r["stranded_facts"])
            out.append((name, "warn", f"{detail}; facts filed under a page that left with its note: {named}",
                        f"Refile them under the note's new page: `memverbs move-facts {r['stranded_facts'][0]['slug']} "
                        "NEW-SLUG` (`memverbs search` finds the note by its words)."))
        elif r["orphans"]:
            named = _some(f"{o['slug']} ({o['facts']} fact{'' if o['facts'] == 1 else 's'}, its note now {o['moved_to']})"
                          for o in r["orphans"])
            first = r["orphans"][0]
            out.append((name, "warn", f"{detail}; {len(r['orphans'])} orphaned page(s), whose note moved: {named}",
                        f"Refile each one's facts under the note's page and delete it, e.g. `memverbs move-facts "
                        f"{first['slug']} {first['moved_to_slug']}` then `memverbs call delete_page "
                        f"'{{\"slug\": \"{first['slug']}\"}}'`."))
        elif pending and r["mode"] == "sync" and not r["watching"]:
            out.append((name, "warn", detail, f"Run `memverbs sync {r['root']}` (or keep `memverbs sync --watch` running)."))
        else:
            out.append((name, "ok", detail, None))
    return out
