"""A backup is checked whole before a row of it is written, and restored in one transaction.

Backups here are real full exports, then changed as an attacker (or a damaged disk) would change
them: re-signed (each table's count and SHA-256 recomputed) so only the deeper checks can catch
the change. Every refusal must be a clear error (exit 1, `fix:`, no traceback) that leaves the
brain exactly as it was, table by table, whoever's rows they are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from backups import Backup, brain_state
from helpers import Client

from memverbs.cli.main import main
from memverbs.server.runtime import Runtime


@pytest.fixture
def exported(tmp_path, home, local, capsys) -> Backup:
    """A full export of a small brain with a history (the source home stays the CLI's home)."""
    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nFirst.\n")
    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nSecond. See [[bob]].\n")
    local.ok("put_page", slug="bob", content="# Bob\n\n## Timeline\n- 2025-01-02: joined\n")
    local.ok("remember", fact="Alice likes tea", provenance="chat", entity="people/alice")
    local.ok("remember", fact="Bob is on call", provenance="chat", entity="bob")
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0
    capsys.readouterr()
    return Backup.load(tmp_path / "out")


@pytest.fixture
def target(tmp_path, monkeypatch, other_brain_url):
    """A second home with its own empty brain, made the CLI's: (runtime, its brain)."""
    from helpers import init_home

    root = tmp_path / "target"
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    if other_brain_url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", other_brain_url)
    init_home(root)
    rt = Runtime()
    yield rt
    rt.close()


def _import(capsys, folder: Path, *extra: str) -> tuple[int, str]:
    code = main(["import", str(folder), *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def _refused(capsys, folder: Path, brain, *words: str) -> str:
    """Import `folder`: refused with a clear error naming `words`, and nothing written."""
    before = brain_state(brain)
    code, text = _import(capsys, folder)
    assert code == 1 and "fix:" in text and "Traceback" not in text, text
    for word in words:
        assert word in text, (word, text)
    assert brain_state(brain) == before, "a refused import wrote rows"
    return text


def test_a_crafted_backup_of_aliases_and_versions_never_reaches_a_populated_brain(tmp_path, home, local, runtime, capsys):
    """The reported attack: a backup listing only aliases and page_versions, into a brain with private pages."""
    local.ok("put_page", slug="secret/plan", content="---\nvisibility: private\n---\n# Plan\n")
    local.ok("put_page", slug="notes/open", content="# Open\n")
    brain = runtime.brain()
    page_ids = {r[0]: r[1] for r in brain.query("SELECT slug, id FROM pages")}
    out = tmp_path / "crafted"
    (out / ".memverbs-backup").mkdir(parents=True)
    crafted = Backup(out, {"format": 1, "schema": [], "tables": [
        {"name": "aliases", "key": ["id"], "columns": ["id", "source_id", "slug", "alias", "alias_norm", "origin"]},
        {"name": "page_versions", "key": ["id"], "columns": ["id", "page_id", "version", "markdown", "title", "visibility",
                                                             "written_at", "replaced_at", "replaced_by"]},
    ]}, {"aliases": [[900, "default", "secret/plan", "Public name", "public name", "manual"]],
         "page_versions": [[900, page_ids["notes/open"], 7, "# Forged\n", "Forged", "world", 1, 2, "local"]]}, {})
    crafted.save()
    _refused(capsys, out, brain, "not a whole backup")
    assert brain.alias_slugs("default", "public name") == []


def test_an_empty_brain_means_every_table(exported, target, capsys):
    """Rows in a table the backup does not list (here: a session cursor, the people) still make a brain not empty."""
    Client(target.local_dispatcher()).ok("delta", session_id="s-1")
    target.brain().add_person("carol", None, 1)
    _refused(capsys, exported.folder, target.brain(), "restores into an empty brain", "people", "session_cursors")


def test_the_manifests_key_never_reaches_sql(exported, target, capsys):
    """The manifest's `key` was spliced into ORDER BY, and an expression in it was evaluated: now it is not read."""
    for t in exported.manifest["tables"]:
        t["key"] = ["id", "abs(-9223372036854775807 - 1)"]  # an overflow on both backends, were it ever run
    exported.save(sign=False)
    code, text = _import(capsys, exported.folder)
    assert code == 0 and "every table matches it" in text, text


@pytest.mark.parametrize("columns", [["id", "slug); DROP TABLE facts; --"], ["id", "id"], "id", ["slug"]])
def test_the_manifest_names_columns_only_from_the_schema(exported, target, capsys, columns):
    exported.entry("pages")["columns"] = columns
    exported.save(sign=False)
    _refused(capsys, exported.folder, target.brain())


@pytest.mark.parametrize("slug", ["../../x", "/etc/passwd", "a\x00b", "a/./b", "C:/x", "a\\b", "a//b", " a"])
def test_restored_slugs_are_those_memverbs_writes(exported, target, capsys, slug):
    """A page's slug becomes a path on the next export: `../../x`, an absolute path or a NUL crashed it."""
    cols = exported.entry("pages")["columns"]
    row = exported.rows["pages"][0]
    row[cols.index("slug")], row[cols.index("slug_rev")] = slug, slug[::-1]
    exported.save()
    _refused(capsys, exported.folder, target.brain(), "slug")


def test_a_link_or_an_entity_slug_outside_the_folder_is_refused_too(exported, target, capsys):
    cols = exported.entry("facts")["columns"]
    exported.rows["facts"][0][cols.index("entity_slug")] = "../../../home"
    exported.save()
    _refused(capsys, exported.folder, target.brain(), "entity_slug")


def _nested(b: Backup) -> None:
    b.rows["facts"][0][2] = ["nested", ["row"]]


def _duplicate_id(b: Backup) -> None:
    b.rows["facts"].append(list(b.rows["facts"][0]))


def _bad_base64(b: Backup) -> None:
    cols = b.entry("pages")["columns"]
    b.rows["pages"][0][cols.index("title")] = {"b64": "not base64!"}


def _text_for_a_number(b: Backup) -> None:
    cols = b.entry("pages")["columns"]
    b.rows["pages"][0][cols.index("created_at")] = "12"  # SQLite would store 12: a row that differs from its backup


def _short_row(b: Backup) -> None:
    b.rows["timeline"][0] = b.rows["timeline"][0][:-1]


def _missing_page(b: Backup) -> None:
    cols = b.entry("chunks")["columns"]
    b.rows["chunks"][0][cols.index("page_id")] = 4242


def _bool_for_an_int(b: Backup) -> None:
    cols = b.entry("links")["columns"]
    b.rows["links"][0][cols.index("private_row")] = True


def _owner_nobody_names(b: Backup) -> None:
    cols = b.entry("facts")["columns"]
    b.rows["facts"][0][cols.index("owner")] = 7


@pytest.mark.parametrize("change", [_nested, _duplicate_id, _bad_base64, _text_for_a_number, _short_row, _missing_page,
                                    _bool_for_an_int, _owner_nobody_names])
def test_a_malformed_row_is_a_clear_error_and_writes_nothing(exported, target, capsys, change):
    change(exported)
    exported.save()
    _refused(capsys, exported.folder, target.brain())


def test_a_changed_row_that_was_not_re_signed_is_caught_by_its_hash(exported, target, capsys):
    cols = exported.entry("facts")["columns"]
    exported.rows["facts"][0][cols.index("fact")] = "Alice likes coffee"
    exported.save(sign=False)
    _refused(capsys, exported.folder, target.brain(), "does not match the manifest")


def test_a_restore_that_fails_half_way_leaves_nothing_behind(exported, target, capsys):
    """Rows that pass every check but break a rule of the schema (two links alike) fail inside the
    restore's one transaction: the tables written before are rolled back with it."""
    rows = exported.rows["links"]
    twin = list(rows[-1])
    twin[0] = rows[-1][0] + 100
    rows.append(twin)
    exported.save()
    text = _refused(capsys, exported.folder, target.brain(), "links", "nothing was restored")
    assert all(n == 0 for n, _ in brain_state(target.brain()).values()), text


def test_a_backup_with_people_it_does_not_name_needs_them_mapped(exported, target, capsys):
    """A backup from before people were backed up (format 1) whose rows belong to person 2: refused
    until the import says whose they are, then restored as asked."""
    exported.manifest["format"] = 1
    exported.manifest["tables"] = [t for t in exported.manifest["tables"] if t["name"] != "people"]
    del exported.rows["people"]
    cols = exported.entry("facts")["columns"]
    exported.rows["facts"][0][cols.index("owner")] = 2
    exported.save()
    text = _refused(capsys, exported.folder, target.brain(), "#2", "--person")
    code, text = _import(capsys, exported.folder, "--person", "#2=alice", "--json")
    assert code == 0, text
    assert [(r["id"], r["name"]) for r in target.brain().people()] == [(2, "alice")]


def test_a_dry_run_checks_the_whole_backup(exported, target, capsys):
    cols = exported.entry("pages")["columns"]
    exported.rows["pages"][0][cols.index("slug")] = "../x"
    exported.rows["pages"][0][cols.index("slug_rev")] = "x/.."
    exported.save()
    code, text = _import(capsys, exported.folder, "--dry-run")
    assert code == 1 and "slug" in text and "Traceback" not in text


def test_people_options_without_a_backup_are_refused(tmp_path, home, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n")
    code, text = _import(capsys, tmp_path / "notes", "--person", "bob=owner")
    assert code == 1 and "--person" in text


def test_the_report_says_what_a_backup_left_out(exported):
    left = exported.manifest["left_out"]
    assert set(left["tables"]) >= {"access_tokens", "oauth_clients", "session_cursors", "text_vectors", "sync_files"}
    assert left["other_people"]["rows"] == {} and exported.manifest["made_by"]["name"] == "owner"
    assert all(set(t) == {"name", "columns", "rows", "sha256"} for t in exported.manifest["tables"])


def test_every_table_a_backup_holds_has_its_rule_for_a_persons_backup():
    """A table added to the schema is backed up (all but what `LEFT_OUT` names), so it needs a rule
    for whose rows a person's backup keeps: without one it would be left out whole, and say so."""
    from memverbs.server.brain.tables import declared
    from memverbs.server.sync.backup import LEFT_OUT, backup_tables
    from memverbs.server.sync.backup_view import RULED

    assert {t.name for t in backup_tables()} == set(RULED)
    assert set(LEFT_OUT) <= {t.name for t in declared()}
