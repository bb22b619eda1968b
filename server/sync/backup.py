"""A brain's own rows as files (`export --full`), and those files back into a new brain (`import`).

The notes of an export say what the brain knows now; a restore needs how it came to know it:
facts with their times (valid_from, created_at, valid_until, expiry and its reason),
supersession, moves, the audit trail, visibility, page history, aliases, links, timeline
rows, projects and the chunks search reads. `export --full DIR` writes each of those tables
to `DIR/.memverbs-backup/<table>.jsonl` (a JSON array per row, columns as the manifest lists
them, in key order; bytes as `{"b64": …}`) with `manifest.json`: the schema steps applied, and
per table its columns, row count and the SHA-256 `memverbs migrate` verifies with
(transfer.py's `table_hash`, computed while the rows are written).

`import DIR` of such a folder into a brain that holds none of these rows inserts them as they
were, ids included (the same inserts and supersession pass as `migrate`), and then compares
every table with the manifest, `migrate`'s way: equal row counts and hashes, or the restore
is reported as failed.

Left out, on purpose: access tokens and OAuth clients (credentials never go into a folder of
notes; mint new ones), session cursors (where each agent last read), embeddings (`memverbs
reindex` computes them again) and sync state (this machine's folders).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memverbs.server.brain.transfer import (
    DEFERRED,
    TABLES,
    TableReport,
    TransferReport,
    _Side,
    digest_rows,
    table_batches,
    table_hash,
)
from memverbs.server.errors import BrainError
from memverbs.server.files import OutsideFolder, read_inside, replace_inside
from memverbs.server.sync.scan import BACKUP_DIR

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

MANIFEST = "manifest.json"
FORMAT = 1
BACKUP_TABLES = ("pages", "page_versions", "aliases", "links", "timeline", "facts", "fact_moves", "fact_audit",
                 "projects", "chunks")
_MAX_FILE = 1 << 40  # a backup's table files are as big as the brain they came from


@dataclass
class BackupReport:
    tables: dict[str, int]  # rows written per table
    errors: list[tuple[str, str]]


def _encode(v: object) -> object:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"b64": base64.b64encode(bytes(v)).decode("ascii")}
    return v


def _decode(v: object) -> object:
    if isinstance(v, dict):
        return base64.b64decode(v["b64"])
    return v


def _spec(name: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return next(t for t in TABLES if t[0] == name)


def write_backup(brain: Brain, dest: str | Path) -> BackupReport:
    """Every backup table of `brain` below `dest/.memverbs-backup/`, then its manifest (last, so a
    backup cut off half-way has none and is never restored)."""
    side = _Side(brain)
    manifest: dict = {"format": FORMAT, "schema": sorted(brain.schema_status()["applied"]), "tables": []}
    report = BackupReport({}, [])
    for name in BACKUP_TABLES:
        _, key, cols = _spec(name)
        digest = hashlib.sha256()
        lines: list[bytes] = []
        n = 0
        for rows in table_batches(side, name, key, cols):
            digest_rows(digest, rows)
            lines.extend(json.dumps([_encode(v) for v in r], ensure_ascii=False).encode("utf-8") + b"\n" for r in rows)
            n += len(rows)
        rel = f"{BACKUP_DIR}/{name}.jsonl"
        if not _write(dest, rel, b"".join(lines), report):
            return report
        manifest["tables"].append({"name": name, "key": list(key), "columns": list(cols), "rows": n, "sha256": digest.hexdigest()})
        report.tables[name] = n
    _write(dest, f"{BACKUP_DIR}/{MANIFEST}", (json.dumps(manifest, indent=1) + "\n").encode("utf-8"), report)
    return report


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


def _read(folder: str | Path, rel: str) -> bytes:
    try:
        data, _ = read_inside(folder, rel, _MAX_FILE)
    except OutsideFolder as exc:
        raise BrainError(f"the backup's {rel} is not read: {exc.message}", "Replace the link with the backup's own file.") from None
    except OSError as exc:
        raise BrainError(f"cannot read the backup's {rel}: {exc.strerror}", "Check the export folder is complete and readable.") from None
    return data


def _manifest(folder: str | Path, target: _Side) -> dict:
    try:
        manifest = json.loads(_read(folder, f"{BACKUP_DIR}/{MANIFEST}"))
        tables = manifest["tables"]
        assert manifest["format"] == FORMAT and isinstance(tables, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise BrainError(
            f"{BACKUP_DIR}/{MANIFEST} is not a memverbs backup manifest this memverbs reads",
            "Export again with `memverbs export --full`, or upgrade memverbs.",
        ) from None
    applied = set(target.brain.schema_status()["applied"])
    if not set(manifest.get("schema", [])) <= applied:
        raise BrainError(
            "the backup was made by a newer memverbs (schema steps this brain does not have)",
            "Upgrade memverbs, run `memverbs init`, then import again.",
        )
    for t in tables:
        if t.get("name") not in BACKUP_TABLES:
            raise BrainError(f"the backup holds a table this memverbs does not restore ({t.get('name')})", "Upgrade memverbs.")
        unknown = set(t["columns"]) - set(target.columns(t["name"]))
        if unknown:
            raise BrainError(
                f"the backup's {t['name']} has columns this brain lacks ({', '.join(sorted(unknown))})",
                "Upgrade memverbs, run `memverbs init`, then import again.",
            )
    return manifest


def check_backup(brain: Brain, folder: str | Path) -> dict:
    """The backup's manifest, once it is known to restore into `brain` (a dry run stops here);
    BrainError with the fix when it cannot: another schema, or a brain that holds rows already."""
    target = _Side(brain)
    manifest = _manifest(folder, target)
    held = {t["name"]: target.count(t["name"]) for t in manifest["tables"]}
    if any(held.values()):
        busy = ", ".join(f"{n} {name}" for name, n in held.items() if n)
        raise BrainError(
            f"a full export restores into an empty brain; this one already holds rows ({busy})",
            "Import it into a new brain (a new MEMVERBS_HOME, or `memverbs init` with another brain.url); "
            f"or move {BACKUP_DIR} out of the folder to import only its notes and facts.",
        )
    return manifest


def restore_backup(brain: Brain, folder: str | Path) -> TransferReport:
    """Insert the backup below `folder` into `brain` (which must hold none of its rows), then compare
    every table with the manifest as `migrate` verifies a copy. Raises BrainError before writing
    anything when the backup cannot be restored here."""
    target = _Side(brain)
    manifest = check_backup(brain, folder)
    report = TransferReport()
    superseded: list[tuple[int, int]] = []
    # The manifest's order is the export's: TABLES', which satisfies the foreign keys.
    for t in manifest["tables"]:
        name, cols = t["name"], tuple(t["columns"])
        deferred = [i for i, c in enumerate(cols) if (name, c) in DEFERRED]
        rows: list[tuple] = []
        for line in _read(folder, f"{BACKUP_DIR}/{name}.jsonl").splitlines():
            if not line.strip():
                continue
            row: tuple[Any, ...] = tuple(_decode(v) for v in json.loads(line))
            if len(row) != len(cols):
                raise BrainError(f"the backup's {name}.jsonl has a row of {len(row)} values for {len(cols)} columns",
                                 "Export again with `memverbs export --full`.")
            for i in deferred:
                if row[i] is not None:
                    superseded.append((row[i], row[cols.index("id")]))
            rows.append(tuple(None if i in deferred else v for i, v in enumerate(row)))
        for start in range(0, len(rows), 1000):
            target.insert(name, cols, rows[start : start + 1000])
        report.copied[name] = len(rows)
    if superseded:
        target.set_superseded(superseded)
    # The name index is derived from pages and aliases, not backed up: written again from them.
    brain.rebuild_names()
    target.finish()
    report.tables = verify_backup(brain, manifest)
    return report


def verify_backup(brain: Brain, manifest: dict) -> list[TableReport]:
    """Each backup table of `brain` against the manifest: row count and `migrate`'s table hash."""
    side = _Side(brain)
    out = []
    for t in manifest["tables"]:
        rows, digest = table_hash(side, t["name"], tuple(t["key"]), tuple(t["columns"]))
        out.append(TableReport(t["name"], t["rows"], rows, t["sha256"], digest))
    return out


def read_manifest(folder: str | Path) -> dict:
    """The manifest as written (for a check after the notes pass)."""
    return json.loads(_read(folder, f"{BACKUP_DIR}/{MANIFEST}"))
