"""A backup read and checked whole before a row of it is written (`import` of a full export).

A backup is a folder someone hands to `import`: its manifest and rows are input, checked as any
input is, and every check below passes for every table before the restore writes anything:

* **The manifest.** A format this memverbs reads, schema steps this brain has. Tables named only
  from memverbs's own list (`backup.backup_tables()`), each once, every table of its format
  there; columns only from the schema's declaration of that table (tables.py), each once, its
  key among them. Nothing the manifest says reaches SQL: statements are built from the
  declaration, and the manifest's names only select from it.
* **Every row.** A JSON array of one value per column, each of its column's kind (an integer, a
  number, text, bytes as `{"b64": …}`; null only where the schema allows it), in strictly
  increasing key order (so no key twice), as many as the manifest says, hashing to its SHA-256.
* **Across tables.** Every reference names a row the backup holds (a chunk's page, a move's
  fact, a fact's superseding fact); every slug is one memverbs writes (a page's by put_page's
  rule; any other with no absolute path, no empty, `.` or `..` segment, no NUL or control
  character), a page's reversed slug is its slug reversed; every row's owner is the owner or a
  person the backup names.
* **People.** Names as `people add` takes them, each name and role once, and the mapping the
  caller asked for (`PeopleMap`: `import --person FROM=TO`, `--role NAME=ROLE`) applied.

What fails is a BrainError that names the file, the line and the column, with the fix.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memverbs.server.brain.tables import Table, table
from memverbs.server.brain.transfer import digest_rows
from memverbs.server.errors import BrainError
from memverbs.server.files import OutsideFolder, read_inside
from memverbs.server.names import valid_slug
from memverbs.server.people import OWNER, OWNER_NAME, check_name
from memverbs.server.sync.backup import FORMAT_TABLES, MANIFEST, backup_tables
from memverbs.server.sync.scan import BACKUP_DIR
from memverbs.server.timeparse import now_ms
from memverbs.server.transport.wire import loads_strict

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

_MAX_MANIFEST = 1 << 20
_MAX_FILE = 1 << 40  # a backup's table files are as big as the brain they came from
_INT64 = 1 << 63
_AGAIN = "Export it again with `memverbs export --full`; nothing was restored."
# Slugs: a page's by put_page's rule; the slugs other rows name (link targets, entities, moves,
# projects) by the rule that keeps a slug a safe path below an export folder.
PAGE_SLUGS = {("pages", "slug"), ("aliases", "slug"), ("links", "from_slug"), ("timeline", "slug")}
OTHER_SLUGS = {("links", "to_slug"), ("facts", "entity_slug"), ("facts", "project"), ("fact_moves", "from_slug"),
               ("fact_moves", "to_slug"), ("projects", "slug")}
OWNER_COLUMN = "owner"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_slug(text: str) -> bool:
    """A slug that stays a path below a folder: no absolute path, no drive, no backslash, no empty,
    `.` or `..` segment, no NUL or other control character."""
    if not text or text != text.strip() or _CONTROL.search(text) or "\\" in text or ":" in text.split("/", 1)[0]:
        return False
    return all(seg not in ("", ".", "..") for seg in text.split("/"))


class BadBackup(BrainError):
    def __init__(self, where: str, problem: str, fix: str = _AGAIN) -> None:
        super().__init__(f"the backup's {where} {problem}", fix)


@dataclass
class TableRows:
    table: Table  # the schema's table, as the backup's columns select from it
    rows: list[tuple]
    sha256: str = ""  # of the rows as they are written: the restore is verified against it


@dataclass
class CheckedBackup:
    manifest: dict
    tables: list[TableRows]  # in the schema's order: the foreign keys' order
    renamed: list[str] = field(default_factory=list)  # what the people mapping did, in words

    @property
    def notes(self) -> frozenset[str]:
        """The SHA-256 of each note as the export wrote it (none in a format-1 backup)."""
        return frozenset(self.manifest.get("notes", {}).values())

    def would_restore(self) -> dict[str, int]:
        return {t.table.name: len(t.rows) for t in self.tables}


class PeopleMap:
    """How the backup's people become this brain's (`import --person FROM=TO`, `--role NAME=ROLE`).

    FROM is a person the backup names, `owner`, or `#N` (the id of rows whose person the backup does
    not name: a format-1 backup has no people). TO is `owner` (their rows become the owner's) or a
    name (the person is restored under it: a new person for the backup's owner). ROLE is the
    Postgres role a restored person acts as; empty for none."""

    def __init__(self, persons: Sequence[str] = (), roles: Sequence[str] = ()) -> None:
        self.persons = [_pair(p, "--person", "FROM=TO") for p in persons]
        self.roles = dict(_pair(r, "--role", "NAME=ROLE") for r in roles)


def _pair(text: str, option: str, shape: str) -> tuple[str, str]:
    left, sep, right = text.partition("=")
    if not sep or not left.strip():
        raise BrainError(f"{option} {text!r} is not {shape}", f"Write it as {option} {shape}, e.g. {option} alice=owner.")
    return left.strip(), right.strip()


# -- reading --------------------------------------------------------------------------------


def read_manifest(folder: str | Path, brain: Brain) -> dict:
    """The manifest, checked: its format, its schema steps, its tables and columns."""
    data = _read(folder, MANIFEST, _MAX_MANIFEST)
    try:
        manifest = loads_strict(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadBackup(MANIFEST, f"is not JSON ({exc})") from None
    if (not isinstance(manifest, dict) or type(manifest.get("format")) is not int or manifest["format"] not in FORMAT_TABLES
            or not isinstance(manifest.get("tables"), list)):
        raise BrainError(
            f"{BACKUP_DIR}/{MANIFEST} is not a memverbs backup manifest this memverbs reads",
            "Export again with `memverbs export --full`, or upgrade memverbs.",
        )
    schema = manifest.get("schema", [])
    if not isinstance(schema, list) or not all(isinstance(s, str) for s in schema):
        raise BadBackup(MANIFEST, "has a schema that is not a list of step names")
    if not set(schema) <= set(brain.schema_status()["applied"]):
        raise BrainError(
            "the backup was made by a newer memverbs (schema steps this brain does not have)",
            "Upgrade memverbs, run `memverbs init`, then import again.",
        )
    notes = manifest.get("notes", {})
    if not isinstance(notes, dict) or not all(isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h) for h in notes.values()):
        raise BadBackup(MANIFEST, "has notes that are not SHA-256 digests by path")
    known = {t.name for t in backup_tables()}
    seen: set[str] = set()
    for entry in manifest["tables"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name not in known:
            raise BrainError(f"the backup holds a table this memverbs does not restore ({str(name)[:80]!r})",
                             "Upgrade memverbs; nothing was restored.")
        if name in seen:
            raise BadBackup(MANIFEST, f"lists the table {name} twice")
        seen.add(name)
        _check_entry(table(name), entry)
    missing = FORMAT_TABLES[manifest["format"]] - seen
    if missing:
        raise BadBackup(MANIFEST, f"does not list {', '.join(sorted(missing))}: it is not a whole backup")
    return manifest


def _check_entry(declared: Table, entry: dict) -> None:
    name = declared.name
    cols = entry.get("columns")
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols) or len(set(cols)) != len(cols):
        raise BadBackup(MANIFEST, f"gives {name} a column list that is not a list of distinct names")
    unknown = set(cols) - set(declared.column_names)
    if unknown:
        raise BrainError(
            f"the backup's {name} has columns this brain lacks ({', '.join(sorted(c[:40] for c in unknown))})",
            "Upgrade memverbs, run `memverbs init`, then import again.",
        )
    if not set(declared.key) <= set(cols):
        raise BadBackup(MANIFEST, f"leaves out {name}'s key ({', '.join(declared.key)})")
    rows, digest = entry.get("rows"), entry.get("sha256")
    if type(rows) is not int or rows < 0 or not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise BadBackup(MANIFEST, f"gives {name} no row count and SHA-256")


def read_backup(folder: str | Path, brain: Brain, people: PeopleMap | None = None) -> CheckedBackup:
    """The backup below `folder`, every check passed, the people mapped: what the restore writes."""
    manifest = read_manifest(folder, brain)
    entries = {e["name"]: e for e in manifest["tables"]}
    tables: dict[str, TableRows] = {}
    for declared in backup_tables():
        entry = entries.get(declared.name)
        if entry is None:  # a table its format does not hold (people, in format 1): no rows
            tables[declared.name] = TableRows(declared, [])
            continue
        cols = tuple(entry["columns"])
        view = declared._replace(columns=tuple(declared.column(c) for c in cols))
        rows = _rows(folder, view, entry)
        tables[declared.name] = TableRows(view, rows)
    _check_references(tables)
    _check_slugs(tables)
    renamed = _map_people(tables, people or PeopleMap())
    for t in tables.values():
        digest = hashlib.sha256()
        digest_rows(digest, t.rows)
        t.sha256 = digest.hexdigest()
    return CheckedBackup(manifest, list(tables.values()), renamed)


def _read(folder: str | Path, name: str, limit: int) -> bytes:
    rel = f"{BACKUP_DIR}/{name}"
    try:
        data, st = read_inside(folder, rel, limit)
    except OutsideFolder as exc:
        raise BrainError(f"the backup's {rel} is not read: {exc.message}", "Replace the link with the backup's own file.") from None
    except OSError as exc:
        raise BrainError(f"cannot read the backup's {rel}: {exc.strerror}", "Check the export folder is complete and readable.") from None
    if st.st_size > limit:
        raise BadBackup(name, f"is larger than {limit} bytes")
    return data


def _rows(folder: str | Path, view: Table, entry: dict) -> list[tuple]:
    """The table's rows, each value checked against its column, in strictly increasing key order,
    as many as the manifest says and hashing to its SHA-256."""
    name = f"{view.name}.jsonl"
    digest = hashlib.sha256()
    rows: list[tuple] = []
    key_at = [view.column_names.index(k) for k in view.key]
    last: tuple | None = None
    for n, line in enumerate(_read(folder, name, _MAX_FILE).split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            values = loads_strict(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise BadBackup(f"{name} line {n}", f"is not JSON ({exc})") from None
        if not isinstance(values, list) or len(values) != len(view.columns):
            raise BadBackup(f"{name} line {n}", f"is not a row of {len(view.columns)} values")
        row = tuple(_value(view.name, c, v, f"{name} line {n}") for c, v in zip(view.columns, values, strict=True))
        key = tuple(row[i] for i in key_at)
        if last is not None and not _before(last, key):
            raise BadBackup(f"{name} line {n}", f"repeats or goes back on the key ({', '.join(view.key)}): each row once, in key order")
        last = key
        rows.append(row)
    digest_rows(digest, rows)
    if len(rows) != entry["rows"] or digest.hexdigest() != entry["sha256"]:
        raise BadBackup(name, f"does not match the manifest ({len(rows)} rows, {entry['rows']} listed, or their SHA-256 "
                              "differs): the file was changed or cut short")
    return rows


def _before(a: tuple, b: tuple) -> bool:
    try:
        return a < b
    except TypeError:  # a key of mixed kinds: the value checks make this unreachable
        return False


def _value(tname: str, col: Any, v: Any, where: str) -> Any:
    """One value as its column holds it, or BadBackup naming the column."""
    if v is None:
        if col.not_null:
            raise BadBackup(where, f"has no {col.name}, which a {tname} row needs")
        return None
    kind = col.kind
    if kind == "bytes":
        if not (isinstance(v, dict) and set(v) == {"b64"} and isinstance(v["b64"], str)):
            raise BadBackup(where, f'has a {col.name} that is not bytes ({{"b64": …}})')
        try:
            return base64.b64decode(v["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise BadBackup(where, f"has a {col.name} that is not base64") from None
    if kind == "int" and type(v) is float and v.is_integer():
        v = int(v)  # a whole number as SQLite may have kept it: it hashes as the integer (transfer._value)
    ok = (type(v) is int and -_INT64 <= v < _INT64 if kind == "int" else
          (type(v) is int or (type(v) is float and math.isfinite(v))) if kind == "float" else
          isinstance(v, str))
    if not ok:
        raise BadBackup(where, f"has a {col.name} that is not {'an integer' if kind == 'int' else 'a number' if kind == 'float' else 'text'}")
    if kind == "text" and "\x00" in v and col.name in _NO_NUL:
        raise BadBackup(where, f"has a NUL character in {col.name}")
    return v


_NO_NUL = {c for _, c in PAGE_SLUGS | OTHER_SLUGS} | {"source_id", "key", "slug_rev", "name", "role", "visibility"}


def _check_references(tables: dict[str, TableRows]) -> None:
    """Every foreign key of every row names a row the backup holds (the brain it goes into is empty)."""
    keys: dict[str, set] = {}
    for t in tables.values():
        for i, col in enumerate(t.table.columns):
            if col.references is None:
                continue
            target = tables.get(col.references)
            if target is None:
                raise BadBackup(f"{t.table.name}.jsonl", f"refers to {col.references}, which a backup does not hold")
            if col.references not in keys:
                at = target.table.column_names.index("id")
                keys[col.references] = {r[at] for r in target.rows}
            for n, r in enumerate(t.rows, 1):
                if r[i] is not None and r[i] not in keys[col.references]:
                    raise BadBackup(f"{t.table.name}.jsonl row {n}", f"names {col.references} row {r[i]} ({col.name}), "
                                    "which the backup does not hold")


def _check_slugs(tables: dict[str, TableRows]) -> None:
    for t in tables.values():
        cols = t.table.column_names
        for i, name in enumerate(cols):
            rule = valid_slug if (t.table.name, name) in PAGE_SLUGS else safe_slug if (t.table.name, name) in OTHER_SLUGS else None
            if rule is None:
                continue
            for n, r in enumerate(t.rows, 1):
                if r[i] is not None and not rule(r[i]):
                    raise BadBackup(f"{t.table.name}.jsonl row {n}", f"has a {name} memverbs never writes ({r[i][:80]!r}): "
                                    "a slug is a path below a folder, never above or outside it")
        if t.table.name == "pages" and {"slug", "slug_rev"} <= set(cols):
            slug, rev = cols.index("slug"), cols.index("slug_rev")
            for n, r in enumerate(t.rows, 1):
                if r[rev] != r[slug][::-1]:
                    raise BadBackup(f"pages.jsonl row {n}", "has a slug_rev that is not its slug reversed")


# -- people -----------------------------------------------------------------------------------


def _map_people(tables: dict[str, TableRows], wanted: PeopleMap) -> list[str]:
    """Apply `wanted` to the people and every owner column; check every owner is a person. Returns
    what it did, in words."""
    people_t = tables["people"]
    cols = people_t.table.column_names
    people = {r[cols.index("id")]: dict(zip(cols, r, strict=True)) for r in people_t.rows}
    owners = set()
    for t in tables.values():
        if OWNER_COLUMN in t.table.column_names:
            at = t.table.column_names.index(OWNER_COLUMN)
            owners |= {r[at] for r in t.rows}
    by_name = {p["name"]: pid for pid, p in people.items() if isinstance(p.get("name"), str)}
    next_id = max([OWNER, *people, *owners]) + 1
    moved: dict[int, int] = {}
    said: list[str] = []
    for source, target in wanted.persons:
        pid = _person_id(source, by_name, people, owners)
        if pid in moved:
            raise BrainError(f"--person maps {source} twice", "Give each person one --person.")
        old = people.pop(pid, None)
        if target == OWNER_NAME:
            moved[pid] = OWNER
            said.append(f"{source}'s rows are the owner's")
            continue
        problem = check_name(target)
        if problem:
            raise BrainError(f"--person {source}={target}: {problem}", "Name the person as `memverbs people add` takes names.")
        if target in by_name and by_name[target] != pid:
            raise BrainError(f"--person {source}={target}: {target} is another person of the backup already",
                             f"Map {target} elsewhere too, or choose another name.")
        if pid != OWNER:
            new_id = pid
        else:  # the backup's owner becomes a person: a new id
            new_id, next_id = next_id, next_id + 1
        moved[pid] = new_id
        people[new_id] = {"id": new_id, "name": target, "role": old.get("role") if old else None,
                          "created_at": old.get("created_at") if old else now_ms()}
        said.append(f"{source} is restored as the person {target}")
    for name, role in wanted.roles.items():
        named = [row for row in people.values() if row["name"] == name]
        if not named:
            raise BrainError(f"--role {name}={role}: the restored brain has no person {name}",
                             "Name a person of the backup (after --person).")
        named[0]["role"] = role or None
        said.append(f"{name} acts as the role {role}" if role else f"{name} has no role")
    for t in tables.values():
        if OWNER_COLUMN in t.table.column_names and moved:
            at = t.table.column_names.index(OWNER_COLUMN)
            t.rows = [(*r[:at], moved.get(r[at], r[at]), *r[at + 1:]) for r in t.rows]
    _check_people(people, {moved.get(o, o) for o in owners})
    people_t.table = table("people")
    people_t.rows = sorted(tuple(p.get(c) for c in people_t.table.column_names) for p in people.values())
    return said


def _person_id(text: str, by_name: dict[str, int], people: dict[int, dict], owners: Iterable[int]) -> int:
    if text == OWNER_NAME:
        return OWNER
    if text in by_name:
        return by_name[text]
    if re.fullmatch(r"#[0-9]{1,18}", text) and (int(text[1:]) in people or int(text[1:]) in set(owners)):
        return int(text[1:])
    raise BrainError(f"--person {text}=…: the backup has no person {text}",
                     "Name one of the backup's people, `owner`, or `#N` for rows of a person it does not name.")


def _check_people(people: dict[int, dict], owners: set[int]) -> None:
    names: set[str] = set()
    roles: set[str] = set()
    for pid, p in people.items():
        name, role = p.get("name"), p.get("role")
        problem = check_name(name) if isinstance(name, str) else "it is not text"
        if pid <= OWNER or problem or not isinstance(name, str):
            raise BadBackup("people.jsonl", f"has a person memverbs never writes (#{pid} {str(name)[:40]!r}: {problem or 'id'})")
        if name in names or (role is not None and role in roles):
            raise BadBackup("people.jsonl", f"names {name!r} or their role twice")
        names.add(name)
        if role is not None:
            roles.add(role)
    unnamed = sorted(o for o in owners if o != OWNER and o not in people)
    if unnamed:
        ids = ", ".join(f"#{o}" for o in unnamed)
        raise BrainError(
            f"rows in the backup belong to people it does not name ({ids}; a backup made before people were backed up)",
            f"Say whose they are: --person '#{unnamed[0]}'=NAME restores them as the person NAME, "
            f"--person '#{unnamed[0]}'=owner gives them to the owner. Nothing was restored.",
        )
