"""`import` of a full export: its backup into an empty brain, in one transaction, verified before it commits.

backup_check.py has read and checked the whole backup before this writes a row. The restore is
then one write transaction, as the brain's owner (`whole_brain()`: every person's rows, on
Postgres through the owner's login's `whole_brain` policy):

1. the brain holds no row in any table the schema declares, whoever's it is (a brain whose only
   rows are a teammate's private ones is not empty);
2. on Postgres, the role of every restored person exists on this server;
3. the rows go in, ids included, table by table in the foreign keys' order, and a row's link to
   a later row of its table (a fact's supersession) once every row is there;
4. on Postgres, the id sequences move past the restored ids, and each restored person's role is
   granted the brain's tables as `people add` grants them;
5. every table is read back and compared with what was written: row count and `migrate`'s hash.

Only then does it commit; any failure rolls the whole restore back, so nothing is left behind.
People are restored as they were (ids, names, roles), so every row keeps its owner and a person
added later gets a new id, never someone else's rows; `PeopleMap` maps them where asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.server.brain.names_store import rebuild_all
from memverbs.server.brain.stores import copied
from memverbs.server.brain.transfer import TableReport, TransferReport, _Side, restart_sequences, table_hash
from memverbs.server.errors import BrainError
from memverbs.server.sync.backup_check import CheckedBackup, PeopleMap, TableRows, read_backup

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.brain.store import Tx

BATCH = 1000


def check_restore(brain: Brain, folder: str | Path, people: PeopleMap | None = None) -> CheckedBackup:
    """The backup, once it is known to restore into `brain` (a dry run stops here); BrainError with
    the fix when it cannot: a backup that fails a check, a brain that holds rows, a missing role."""
    checked = read_backup(folder, brain, people)
    with brain.snapshot(), brain.whole_brain():
        _check_target(brain, checked)
    return checked


def restore_backup(brain: Brain, folder: str | Path, people: PeopleMap | None = None) -> tuple[CheckedBackup, TransferReport]:
    """Restore the backup below `folder` into `brain`, all or nothing (the module says how)."""
    checked = read_backup(folder, brain, people)
    report = TransferReport()
    side = _Side(brain)
    with side.brain.write() as db, brain.whole_brain():
        _check_target(brain, checked)
        for t in checked.tables:
            _insert(side, db, t)
            report.copied[t.table.name] = len(t.rows)
        for t in checked.tables:
            _link_later(side, db, t)
        rebuild_all(db)  # the name index is not in a backup: written again from the rows restored
        if side.pg:
            restart_sequences(db)
            _grant_roles(side, checked)
        report.tables = [TableReport(t.table.name, len(t.rows), *_read_back(side, t)) for t in checked.tables]
        bad = [r.table for r in report.tables if not r.ok]
        if bad:
            raise BrainError(
                f"the restored {', '.join(bad)} did not read back as the backup has them; nothing was restored",
                "Report this with the backup's manifest: the brain changed rows as it stored them.",
            )
    side.finish()  # Postgres: vector columns and planner statistics, after the commit
    return checked, report


def verify_restore(brain: Brain, checked: CheckedBackup) -> list[TableReport]:
    """Each restored table of `brain` against the backup (after the notes pass, which may change a page)."""
    side = _Side(brain)
    with brain.snapshot(), brain.whole_brain():
        return [TableReport(t.table.name, len(t.rows), *_read_back(side, t)) for t in checked.tables]


def _read_back(side: _Side, t: TableRows) -> tuple[int, str, str]:
    rows, digest = table_hash(side, t.table)
    return rows, t.sha256, digest


def _check_target(brain: Brain, checked: CheckedBackup) -> None:
    side = _Side(brain)
    held = {t.name: n for t in copied() if (n := side.count(t))}
    if held:
        busy = ", ".join(f"{n} {name}" for name, n in held.items())
        raise BrainError(
            f"a full export restores into an empty brain; this one already holds rows ({busy})",
            "Import it into a new brain (a new MEMVERBS_HOME, or `memverbs init` with another brain.url); "
            "or move .memverbs-backup out of the folder to import only its notes and facts.",
        )
    if side.pg:
        people = next(t for t in checked.tables if t.table.name == "people")
        at = people.table.column_names.index("role")
        wanted = sorted({r[at] for r in people.rows if r[at] is not None})
        there = {r[0] for r in side.brain.query("SELECT rolname::text FROM pg_roles WHERE rolname = ANY(?)", (wanted,))}
        missing = [role for role in wanted if role not in there]
        if missing:
            name = next(r[people.table.column_names.index("name")] for r in people.rows if r[at] == missing[0])
            raise BrainError(
                f"the backup's people act as Postgres roles this server does not have ({', '.join(missing)})",
                f"Create them (`CREATE ROLE \"{missing[0]}\" LOGIN`), or map each: --role {name}=ROLE for another role, "
                f"--role {name}= for none (`memverbs people add {name} --role ROLE` maps one later). Nothing was restored.",
            )


def _insert(side: _Side, db: Tx, t: TableRows) -> None:
    cols = t.table.column_names
    later = [cols.index(c) for c in t.table.self_references]
    sql = f"INSERT INTO {t.table.name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    rows = [tuple(None if i in later else v for i, v in enumerate(r)) for r in t.rows]
    for start in range(0, len(rows), BATCH):
        _run(side, db, t, sql, rows[start : start + BATCH])


def _link_later(side: _Side, db: Tx, t: TableRows) -> None:
    cols = t.table.column_names
    for column in t.table.self_references:
        at, key = cols.index(column), cols.index("id")
        pairs = [(r[at], r[key]) for r in t.rows if r[at] is not None]
        if pairs:
            _run(side, db, t, f"UPDATE {t.table.name} SET {column} = ? WHERE id = ?", pairs)


def _run(side: _Side, db: Tx, t: TableRows, sql: str, rows: list[tuple]) -> None:
    try:
        db.executemany(sql, rows)
    except side.brain.dialect.write_failures as exc:
        raise BrainError(
            f"the backup's {t.table.name} rows cannot be stored in this brain ({str(exc).strip()[:300]}); nothing was restored",
            "The backup breaks a rule of the brain's schema (a slug or key twice, a value a column does not take): "
            "export it again with `memverbs export --full`.",
        ) from None


def _grant_roles(side: _Side, checked: CheckedBackup) -> None:
    """Each restored person's role gets the brain's tables, as `people add` grants them (in the restore's transaction)."""
    from memverbs.server.brain.postgres import PostgresBrain  # noqa: PLC0415 - psycopg only for Postgres

    assert isinstance(side.brain, PostgresBrain)
    people = next(t for t in checked.tables if t.table.name == "people")
    at = people.table.column_names.index("role")
    for role in sorted({r[at] for r in people.rows if r[at] is not None}):
        side.brain.grant_person_role(role, create=False)
