"""Export as a way back: facts keep their time, and `export --full` → `import` restores a brain exactly,
checked table by table as `memverbs migrate` verifies a copy."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from helpers import Client, init_home
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaults import write

from memverbs.cli.main import main
from memverbs.server.brain.transfer import TABLES, _Side, table_hash
from memverbs.server.runtime import Runtime
from memverbs.server.sync.backup import BACKUP_TABLES
from memverbs.server.timeparse import iso, parse_instant


@contextlib.contextmanager
def second_home(tmp_path: Path, monkeypatch, other_brain_url, name: str = "home2"):
    """Point the CLI at a new home with its own empty brain (same backend)."""
    root = tmp_path / name
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    if other_brain_url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", other_brain_url)
    init_home(root)
    yield root


def hashes(brain) -> dict[str, tuple[int, str]]:
    side = _Side(brain)
    return {name: table_hash(side, name, key, cols) for name, key, cols in TABLES if name in BACKUP_TABLES}


def test_a_fact_read_back_from_the_facts_file_keeps_the_time_it_became_true(tmp_path, cli_json, local):
    line = {"entity": "people/alice", "fact": "Alice moved to Lisbon", "kind": "event", "provenance": "letter",
            "valid_from": "2024-03-01T08:00:00.000Z", "valid_until": None, "visibility": "world"}
    write(tmp_path / "v" / "memverbs-facts.jsonl", json.dumps(line) + "\n")
    code, rep = cli_json("import", tmp_path / "v")
    assert code == 0 and rep["facts"]["inserted"] == 1, rep
    [fact] = local.ok("recall", entity="people/alice")["facts"]
    assert fact["valid_from"] == "2024-03-01T08:00:00.000Z"  # not the time of the import


def test_a_bad_valid_from_is_that_lines_error(tmp_path, cli_json):
    write(tmp_path / "v" / "memverbs-facts.jsonl", json.dumps({"fact": "x", "provenance": "p", "valid_from": "last year"}) + "\n")
    code, rep = cli_json("import", tmp_path / "v")
    assert code == 1 and "valid_from" in rep["error_files"][0]["reason"] and rep["facts"]["inserted"] == 0


def test_export_then_import_keeps_every_facts_time(tmp_path, home, local, runtime, monkeypatch, capsys, other_brain_url):
    local.ok("remember", fact="Alice prefers tea", provenance="chat", entity="people/alice")
    local.ok("remember", fact="Bob ships on Fridays", provenance="chat", entity="people/bob")
    before = {f["fact"]: f["valid_from"] for f in local.ok("recall", limit=10)["facts"]}
    assert main(["export", str(tmp_path / "out")]) == 0
    runtime.close()
    with second_home(tmp_path, monkeypatch, other_brain_url):
        assert main(["import", str(tmp_path / "out")]) == 0
        rt = Runtime()
        try:
            after = {f["fact"]: f["valid_from"] for f in Client(rt.local_dispatcher()).ok("recall", limit=10)["facts"]}
        finally:
            rt.close()
    capsys.readouterr()
    assert after == before


def seed_history(local, runtime) -> None:
    """A brain with a history: versions, aliases, links, timeline, supersession by hand, moves, a
    forgotten and restored fact, a visibility change, a private page, an expiring fact."""
    from memverbs.server.timeparse import now_ms

    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nFirst.\n")
    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nSecond. See [[bob]].\n")
    local.ok("put_page", slug="bob", content="# Bob\n\n## Timeline\n- 2025-01-02: joined\n")
    local.ok("put_page", slug="secret/plan", content="---\nvisibility: private\n---\n# Plan\n")
    local.ok("add_alias", slug="bob", alias="Robert")
    local.ok("add_timeline_entry", slug="people/alice", date="2026-03-04", summary="Promoted")
    local.ok("remember", fact="Alice likes tea", provenance="chat", entity="people/alice", kind="preference")
    local.ok("remember", fact="Bob is on call", provenance="chat", entity="bob", ttl="30d")
    local.ok("remember", fact="Alice's salary", provenance="chat", entity="people/alice", visibility="private")
    local.ok("remember", fact="Old fact", provenance="chat", entity="ali-old")
    brain, source = runtime.brain(), runtime.source
    local.ok("forget", id="1", reason="changed her mind")
    brain.restore_fact(source, 1, reason="she did not", actor="test", now=now_ms())
    brain.move_facts(source, "ali-old", "people/alice", "same person", now_ms())
    brain.set_fact_visibility(source, 2, "private", widen=False, reason="on-call is private", actor="test", now=now_ms())
    local.ok("remember", fact="Alice likes green tea", provenance="chat", entity="people/alice", kind="preference")
    with brain.write() as db:  # a supersession as remember's embedding rule makes one
        db.execute("UPDATE facts SET superseded_by = 5, expired_at = 1, expiry_reason = 'superseded by fact #5' WHERE id = 1")


def rows_of_names(brain) -> set[tuple]:
    return {tuple(r) for r in brain.query("SELECT source_id, name_key, slug, how FROM entity_names")}


def test_export_full_then_import_restores_the_brain_exactly(tmp_path, home, local, runtime, monkeypatch, capsys, cli_json,
                                                            other_brain_url):
    seed_history(local, runtime)
    source_hashes = hashes(runtime.brain())
    names_before = rows_of_names(runtime.brain())
    assert names_before
    assert source_hashes["fact_audit"][0] >= 2 and source_hashes["fact_moves"][0] == 1 and source_hashes["page_versions"][0] == 1
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0
    assert "full backup" in capsys.readouterr().out
    runtime.close()
    with second_home(tmp_path, monkeypatch, other_brain_url):
        code, rep = cli_json("import", tmp_path / "out")
        assert code == 0, rep
        assert rep["restore"]["ok"] and {t["table"] for t in rep["restore"]["verify"]} == set(BACKUP_TABLES)
        assert rep["facts"]["inserted"] == 0 and rep["created"] == rep["updated"] == 0  # the notes are the restored pages
        rt = Runtime()
        try:
            assert hashes(rt.brain()) == source_hashes  # migrate's comparison, brain to brain
            client = Client(rt.local_dispatcher())
            assert [r["slug"] for r in client.ok("search", query="Second")["results"]] == ["people/alice"]  # chunks and search
            history = client.ok("recall", entity="people/alice", limit=10)["facts"]
            assert {f["fact"] for f in history} >= {"Alice likes green tea", "Old fact"}
            # The name index is not backed up: the restore wrote it again from the pages and aliases.
            assert rows_of_names(rt.brain()) == names_before
        finally:
            rt.close()
        # a later export of the restored brain writes the notes where the first one did
        assert main(["export", str(tmp_path / "again"), "--full"]) == 0
        capsys.readouterr()
    first = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.md")}
    again = {p.relative_to(tmp_path / "again").as_posix() for p in (tmp_path / "again").rglob("*.md")}
    assert first == again and "secret/plan.md" in first  # a full backup includes private pages


def test_a_full_export_does_not_restore_over_a_brain_that_has_rows(tmp_path, home, local, capsys, cli):
    local.ok("put_page", slug="a", content="# A\n")
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0
    local.ok("put_page", slug="b", content="# B\n")
    capsys.readouterr()
    code, _, err = cli("import", tmp_path / "out")
    assert code == 1 and "restores into an empty brain" in err and "fix:" in err and "Traceback" not in err
    code, _, err = cli("import", tmp_path / "out", "--dry-run")
    assert code == 1 and "restores into an empty brain" in err


def test_a_dry_run_says_what_it_would_restore_and_writes_nothing(tmp_path, home, local, monkeypatch, cli, cli_json,
                                                                  other_brain_url):
    local.ok("put_page", slug="a", content="# A\n")
    local.ok("remember", fact="A fact", provenance="p", entity="a")
    assert cli("export", tmp_path / "out", "--full")[0] == 0
    with second_home(tmp_path, monkeypatch, other_brain_url):
        code, rep = cli_json("import", tmp_path / "out", "--dry-run")
        assert code == 0 and rep["restore"]["would_restore"]["facts"] == 1
        code, rep = cli_json("import", tmp_path / "out")  # nothing was written: the real restore still finds an empty brain
        assert code == 0 and rep["restore"]["ok"]


def test_a_restore_that_does_not_match_its_backup_is_an_error(tmp_path, home, local, monkeypatch, cli, cli_json, other_brain_url):
    local.ok("put_page", slug="a", content="# A\n")
    assert cli("export", tmp_path / "out", "--full")[0] == 0
    (tmp_path / "out" / "a.md").write_text("# A, edited after the export\n")  # the notes pass changes the page
    with second_home(tmp_path, monkeypatch, other_brain_url):
        code, rep = cli_json("import", tmp_path / "out")
        assert code == 1 and not rep["restore"]["ok"]
        assert any(e["file"] == "restore: pages" for e in rep["error_files"])


# -- the round trip as a property, on both backends ---------------------------------------------

_word = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("page"), _word, st.text(max_size=40), st.booleans()),
        st.tuples(st.just("fact"), _word, st.text(min_size=1, max_size=30).filter(str.strip), st.sampled_from(["world", "private"])),
        st.tuples(st.just("forget"), st.integers(1, 6), st.just(""), st.just(False)),
        st.tuples(st.just("move"), _word, _word, st.just(False)),
        st.tuples(st.just("alias"), _word, _word, st.just(False)),
        st.tuples(st.just("event"), _word, _word, st.just(False)),
    ),
    min_size=1,
    max_size=12,
)


@pytest.fixture
def fresh_brain_urls(request, brain_backend):
    """Makes a new brain URL per call (None: SQLite files), dropped at the end."""
    made: list[tuple[object, str]] = []

    def make() -> str | None:
        if brain_backend == "sqlite":
            return None
        server = request.getfixturevalue("pg")
        url = server.new_database()
        made.append((server, url))
        return url

    yield make
    for server, url in made:
        server.drop_database(url)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=_OPS)
def test_export_full_import_round_trip_property(ops, tmp_path_factory, fresh_brain_urls, capsys):
    from memverbs.server.timeparse import now_ms

    base = tmp_path_factory.mktemp("full")
    with pytest.MonkeyPatch.context() as mp:
        url = fresh_brain_urls()
        mp.setenv("MEMVERBS_HOME", str(base / "a"))
        if url:
            mp.setenv("MEMVERBS_BRAIN__URL", url)
        else:
            mp.delenv("MEMVERBS_BRAIN__URL", raising=False)
        rt = Runtime(init_home(base / "a"))
        try:
            client, brain = Client(rt.local_dispatcher()), rt.brain()
            for op, a, b, flag in ops:
                if op == "page":
                    client("put_page", slug=a, content=("---\nvisibility: private\n---\n" if flag else "") + b + "\n")
                elif op == "fact":
                    client("remember", fact=b, provenance="t", entity=a, visibility=flag)
                elif op == "forget":
                    client("forget", id=str(a), reason="r")
                elif op == "move":
                    brain.move_facts(rt.source, a, b, "r", now_ms())
                elif op == "alias":
                    client("add_alias", slug=a, alias=b)
                elif op == "event":
                    client("add_timeline_entry", slug=a, date="2025-01-02", summary=b)
            expected = hashes(brain)
        finally:
            rt.close()
        assert main(["export", str(base / "out"), "--full"]) == 0
        url = fresh_brain_urls()
        mp.setenv("MEMVERBS_HOME", str(base / "b"))
        if url:
            mp.setenv("MEMVERBS_BRAIN__URL", url)
        init_home(base / "b")
        assert main(["import", str(base / "out"), "--json"]) == 0, capsys.readouterr().out
        rt = Runtime()
        try:
            assert hashes(rt.brain()) == expected
        finally:
            rt.close()
    capsys.readouterr()


def test_iso_times_in_the_facts_file_parse_back_to_the_same_instant():
    for ms in (0, 1_709_280_000_123, 253_402_300_799_999):
        assert parse_instant(iso(ms)) == ms


def test_a_backup_made_on_sqlite_restores_into_postgres(tmp_path, pg, monkeypatch, capsys):
    """A backup is backend-neutral: the same rows and the same per-table hashes on the other backend."""
    monkeypatch.delenv("MEMVERBS_BRAIN__URL", raising=False)
    monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path / "a"))
    rt = Runtime(init_home(tmp_path / "a"))
    try:
        seed_history(Client(rt.local_dispatcher()), rt)
        expected = hashes(rt.brain())
    finally:
        rt.close()
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0
    url = pg.new_database()
    try:
        monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path / "b"))
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
        init_home(tmp_path / "b")
        assert main(["import", str(tmp_path / "out")]) == 0
        assert "every table matches it" in capsys.readouterr().out
        rt = Runtime()
        try:
            assert rt.brain().backend == "postgres" and hashes(rt.brain()) == expected
        finally:
            rt.close()
    finally:
        pg.drop_database(url)
