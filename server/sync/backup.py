"""A brain's own rows as files (`export --full`), the way back into a new brain (`import`: restore.py).

The notes of an export say what the brain knows now; a restore needs how it came to know it:
facts with their times (valid_from, created_at, valid_until, expiry and its reason),
supersession, moves, the audit trail, visibility, page history, aliases, links, timeline
rows, projects, the chunks search reads, and the people every row belongs to. `export --full
DIR` writes each of those tables to `DIR/.memverbs-backup/<table>.jsonl` (a JSON array per row,
columns as the manifest lists them, in key order; bytes as `{"b64": …}`) with `manifest.json`:
the format, the schema steps applied, who made it and what it left out and why, and per table
its columns, row count and the SHA-256 `memverbs migrate` verifies with (transfer.py's
`digest_rows`, computed while the rows are written).

A backup is one moment of the brain: the export reads everything in one snapshot
(`Brain.snapshot()`: one read transaction on SQLite, REPEATABLE READ on Postgres), so no row
in it points at a row it lacks however busy the brain is.

Whose rows it holds. By default, what the exporting person may read: world rows and their own
private ones (backup_view.py says exactly how each table is cut; on SQLite the file's user reads
every private fact and page, and only other people's `[private]` page rows are cut). With
`--all-people` (the brain's owner only: the owner's login on Postgres, the file's user on
SQLite) it is the whole brain, every person's private rows included, and a restore gives the
brain back exactly. Either way the manifest and the report say what was left out and why.

Left out of every backup, on purpose (`LEFT_OUT` says why, as server/brain/stores.py declares each
table): credentials (access tokens, OAuth clients and their tokens: mint new ones), session
cursors (where each agent last read), embeddings (`memverbs reindex` computes them again) and sync
state (this machine's folders); the name index is written again from the pages restored.
"""

from __future__ import annotations

import base64
import hashlib
import json
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.server.brain.stores import copied, kept, left_out
from memverbs.server.brain.tables import Table
from memverbs.server.brain.transfer import _Side, digest_rows, table_batches
from memverbs.server.errors import BrainError
from memverbs.server.files import OutsideFolder, read_inside, replace_inside
from memverbs.server.people import OWNER, OWNER_NAME
from memverbs.server.sync.backup_view import PersonView
from memverbs.server.sync.scan import BACKUP_DIR

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

MANIFEST = "manifest.json"
FORMAT = 2  # 2: people, who made it and what it left out; 1 had neither
# What every backup leaves out, and why: the declaration's (server/brain/stores.py: `LeftOut`).
LEFT_OUT = left_out()
# The tables every backup of a format holds: a backup without one of them is not a backup of a brain.
FORMAT_TABLES = {
    1: frozenset({"pages", "page_versions", "aliases", "links", "timeline", "facts", "fact_moves", "fact_audit",
                  "projects", "chunks"}),
}
FORMAT_TABLES[2] = FORMAT_TABLES[1] | {"people"}


def backup_tables() -> tuple[Table, ...]:
    """Every table a backup holds, in an order that satisfies the foreign keys: those the declaration
    keeps (server/brain/stores.py), all the schema steps create but what is left out or rebuilt."""
    holds = kept()
    return tuple(t for t in copied() if t.name in holds)


@dataclass
class BackupReport:
    tables: dict[str, int]  # rows written per table
    errors: list[tuple[str, str]]
    left_out: dict = field(default_factory=dict)  # the manifest's: tables, and other people's rows


def encode(v: object) -> object:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"b64": base64.b64encode(bytes(v)).decode("ascii")}
    return v


def write_backup(brain: Brain, dest: str | Path, *, everyone: bool = False) -> BackupReport:
    """Every backup table of `brain` below `dest/.memverbs-backup/`, then its manifest (last, so a
    backup cut off half-way has none and is never restored). Runs inside `brain.snapshot()`.

    `everyone`: every person's rows (the brain's owner only); else the rows the exporting person
    may read, cut table by table (backup_view.py), with what was cut counted."""
    person = brain.session_person()
    owner = person == OWNER
    if everyone and not owner:
        raise BrainError(
            "--all-people backs up every person's private rows, which only the brain's owner may read",
            "Leave it out to back up what is yours and the world's; the brain's owner takes the whole brain.",
        )
    side = _Side(brain)
    # What the person may read: on SQLite the file's user reads every private fact and page (backup_view.py).
    view = None if everyone else PersonView(person, lambda: side.brain.query("SELECT id, visibility, owner FROM facts"),
                                            every_private=owner and brain.backend == "sqlite")
    names = {OWNER: OWNER_NAME} | {int(r["id"]): r["name"] for r in brain.people()}
    made_by = {"person": person, "name": names.get(person, f"#{person}"), "scope": "all people" if everyone else "person"}
    manifest: dict = {"format": FORMAT, "schema": sorted(brain.schema_status()["applied"]), "made_by": made_by, "tables": []}
    report = BackupReport({}, [])
    # The owner reads every row (and so counts exactly what a person's backup leaves out); anyone
    # else reads what the database shows their login.
    with brain.whole_brain() if owner else nullcontext():
        for table in backup_tables():
            digest = hashlib.sha256()
            lines: list[bytes] = []
            n = 0
            for batch in table_batches(side, table):
                rows = view.keep(table, batch) if view is not None else [tuple(r) for r in batch]
                digest_rows(digest, rows)
                lines.extend(json.dumps([encode(v) for v in r], ensure_ascii=False).encode("utf-8") + b"\n" for r in rows)
                n += len(rows)
            if not _write(dest, f"{BACKUP_DIR}/{table.name}.jsonl", b"".join(lines), report):
                return report
            manifest["tables"].append({"name": table.name, "columns": list(table.column_names), "rows": n,
                                       "sha256": digest.hexdigest()})
            report.tables[table.name] = n
    manifest["notes"] = _notes(dest)
    report.left_out = manifest["left_out"] = {
        "tables": dict(LEFT_OUT),
        "other_people": view.left_out(names, counted=owner) if view is not None else None,
    }
    _write(dest, f"{BACKUP_DIR}/{MANIFEST}", (json.dumps(manifest, indent=1) + "\n").encode("utf-8"), report)
    return report


def _notes(dest: str | Path) -> dict[str, str]:
    """Each note in the folder as the export left it: its SHA-256, by path (a restore records these
    notes as they are, and applies one edited since as an edit)."""
    from memverbs.server.sync import scan  # noqa: PLC0415
    from memverbs.server.sync.importer import MAX_BYTES, file_hash  # noqa: PLC0415

    digests = {}
    for entry in scan.walk(str(dest)):
        if entry.kind == "page":
            try:
                data, st = read_inside(dest, entry.rel, MAX_BYTES)
            except (OSError, OutsideFolder):
                continue
            if st.st_size <= MAX_BYTES:
                digests[entry.rel] = file_hash(data)
    return digests


def _write(dest: str | Path, rel: str, data: bytes, report: BackupReport) -> bool:
    try:
        replace_inside(dest, rel, data, make_dirs=True)
        return True
    except OutsideFolder as exc:
        report.errors.append((rel, f"not written: {exc.message}"))
    except OSError as exc:
        report.errors.append((rel, f"cannot write: {exc.strerror}"))
    return False


def has_backup(folder: str | Path) -> bool:
    path = Path(folder) / BACKUP_DIR / MANIFEST
    return path.is_file() and not path.is_symlink() and not path.parent.is_symlink()
