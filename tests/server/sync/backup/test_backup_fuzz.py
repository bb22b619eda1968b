"""Property: an `import` of a crafted backup restores exactly what its files say, or writes nothing.

Each example takes a real full export (a brain with a history and two people) and changes it as an
attacker or a damaged disk would: one value of one row replaced by anything JSON can say (huge
numbers, booleans, nested arrays, `{"b64": …}` junk, hostile slugs, NUL), a row dropped,
repeated or moved, a column gone from a table, a table file replaced by junk bytes, a manifest field changed (format,
schema, a table's name, columns, count, hash, the key, the notes), an owner changed. Most
examples re-sign the backup (each table's count and SHA-256 recomputed), so only the checks
below the manifest can catch them. Then it is restored into two brains:

* a **populated** brain: the restore must be refused, with a BrainError (never another
  exception), and every table left exactly as it was, whoever's its rows;
* an **empty** brain: either the restore is refused and the brain stays empty, or it restores and
  every table reads back exactly as the files say (then the brain is emptied for the next example).

`python -m benchmarks.backup_fuzz` runs it long and records the figures in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from backups import Backup, brain_state, empty_brain, seed_history
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memverbs.server.brain.transfer import _Side, table_hash
from memverbs.server.errors import BrainError
from memverbs.server.sync.restore import restore_backup

EXAMPLES = int(os.environ.get("MEMVERBS_BACKUP_FUZZ_EXAMPLES", "15"))
TABLES = ("people", "pages", "page_versions", "aliases", "links", "timeline", "facts", "fact_moves", "fact_audit",
          "projects", "chunks")

_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["../../x", "/etc/passwd", "a\x00b", "C:/x", "a//b", "people/alice", "world",
                                            "private", "owner", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["b64", "x"]), inner, max_size=2),
    max_leaves=4,
)
_index = st.integers(min_value=0, max_value=50)
CHANGES = st.one_of(
    st.tuples(st.just("value"), st.sampled_from(TABLES), _index, _index, _json),
    st.tuples(st.just("owner"), st.sampled_from(("pages", "facts", "links", "timeline", "page_versions")), _index,
              st.integers(min_value=-1, max_value=6)),
    st.tuples(st.sampled_from(["drop", "repeat", "move"]), st.sampled_from(TABLES), _index, _index),
    st.tuples(st.just("junk"), st.sampled_from(TABLES), st.binary(max_size=64)),
    st.tuples(st.just("column gone"), st.sampled_from(TABLES), _index),
    st.tuples(st.just("manifest"), st.sampled_from(["format", "schema", "name", "columns", "rows", "sha256", "key", "notes",
                                                    "tables"]), _index, _json),
)


class Tally:
    def __init__(self) -> None:
        self.examples = 0
        self.outcomes: Counter = Counter()  # refused / restored, per target
        self.written_on_refusal = 0


def change_backup(b: Backup, change: tuple) -> dict[str, bytes]:
    """Apply one change to `b` (rows and manifest); returns table files to write as raw bytes instead."""
    kind = change[0]
    if kind in ("value", "owner", "drop", "repeat", "move"):
        rows = b.rows.get(change[1]) or []
        if not rows:
            return {}
        i = change[2] % len(rows)
        if kind == "value":
            rows[i][change[3] % len(rows[i])] = change[4]
        elif kind == "owner":
            cols = b.entry(change[1])["columns"]
            rows[i][cols.index("owner")] = change[3]
        elif kind == "drop":
            del rows[i]
        elif kind == "repeat":
            rows.insert(i, list(rows[i]))
        else:
            rows.insert(change[3] % len(rows), rows.pop(i))
        return {}
    if kind == "junk":
        return {change[1]: change[2]}
    if kind == "column gone":  # a backup from a schema without that column, or one cut by hand
        entry, rows = b.entry(change[1]), b.rows.get(change[1]) or []
        at = change[2] % len(entry["columns"])
        del entry["columns"][at]
        for r in rows:
            del r[at]
        return {}
    field, at, value = change[1], change[2], change[3]
    tables = b.manifest["tables"]
    entry = tables[at % len(tables)]
    if field in ("format", "schema", "notes", "tables"):
        b.manifest[field] = value
    elif field == "columns" and isinstance(value, list):
        entry["columns"] = [*entry["columns"][:-1], *value] if value else entry["columns"][1:]
    else:
        entry[field] = value
    return {}


def check_example(backup: Backup, change: tuple, sign: bool, populated, empty, tally: Tally) -> None:
    with tempfile.TemporaryDirectory(prefix="memverbs-backup-fuzz-") as tmp:
        crafted = backup.copy_to(Path(tmp) / "b")
        raw = change_backup(crafted, change)
        crafted.save(sign=sign, raw=raw)
        tally.examples += 1
        before = brain_state(populated)
        with pytest.raises(BrainError) as refused:
            restore_backup(populated, crafted.folder)
        assert refused.value.message and refused.value.fix
        if brain_state(populated) != before:
            tally.written_on_refusal += 1
        tally.outcomes["populated: refused"] += 1
        blank = brain_state(empty)
        try:
            checked, report = restore_backup(empty, crafted.folder)
        except BrainError as exc:
            assert exc.message and exc.fix
            if brain_state(empty) != blank:
                tally.written_on_refusal += 1
            tally.outcomes["empty: refused"] += 1
        else:
            assert report.ok, report.as_dict()
            side = _Side(empty)
            with empty.snapshot(), empty.whole_brain():  # each table's columns as the backup has them
                after = {t.table.name: table_hash(side, t.table) for t in checked.tables}
            assert after == {t.table.name: (len(t.rows), t.sha256) for t in checked.tables}
            tally.outcomes["empty: restored"] += 1
            empty_brain(empty)
        assert tally.written_on_refusal == 0, change


_counter = itertools.count()


def fuzz_import(backup: Backup, populated, empty, examples: int) -> Tally:
    tally = Tally()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(change=CHANGES, sign=st.booleans() | st.just(True))
    @example(change=("column gone", "people", 1), sign=True)  # found by this property: a person without a name
    def one(change, sign):
        check_example(backup, change, sign, populated, empty, tally)

    one()
    return tally


def grow(local, runtime) -> None:
    """A brain with a history and two people: the source of the backup, and the populated target."""
    seed_history(local, runtime)
    runtime.brain().add_person("bob", None, 1)


@pytest.fixture
def source(tmp_path, home, local, runtime, capsys) -> Backup:
    from memverbs.cli.main import main

    grow(local, runtime)
    assert main(["export", str(tmp_path / "out"), "--full", "--all-people"]) == 0
    capsys.readouterr()
    return Backup.load(tmp_path / "out")


@pytest.fixture
def empty_target(tmp_path, other_brain_url):
    from helpers import init_home

    from memverbs.server.brain.factory import open_brain
    from memverbs.server.brain.location import BrainLocation

    if other_brain_url:
        brain = open_brain(BrainLocation("postgres", url=other_brain_url), create=True)
    else:
        root = init_home(tmp_path / "empty")
        brain = open_brain(BrainLocation("sqlite", path=root.root / "brain.db"))
    yield brain
    brain.close()
    shutil.rmtree(tmp_path / "empty", ignore_errors=True)


def test_a_crafted_backup_restores_exactly_or_writes_nothing(source, runtime, empty_target):
    tally = fuzz_import(source, runtime.brain(), empty_target, EXAMPLES)
    assert tally.examples >= 1 and tally.written_on_refusal == 0
    assert tally.outcomes["populated: refused"] == tally.examples
