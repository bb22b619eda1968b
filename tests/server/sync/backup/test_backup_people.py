"""Backups and people: a person's backup holds what they may read and says what it left out; the
owner's `--all-people` backup holds everyone's, people included, and restores them as they were.

Bob here is a person of the brain acting through a token (no Postgres role of his own: on
Postgres the owner's server names him per call, and row-level security holds as it does for a
role). He writes a private fact, a private page, a world page with a `[private]` row, moves his
private fact with a reason and makes a fact private with another: all of it his. On Postgres the
owner's plain `export --full` must hold none of it anywhere in the folder; on SQLite, where the
file's user reads every private fact and page, none of his `[private]` page rows; `--all-people`
holds all of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backups import Backup, brain_state
from helpers import Client, init_home

from memverbs.cli.main import main
from memverbs.server import people, tokens
from memverbs.server.runtime import Runtime
from memverbs.server.sync.backup import backup_tables
from memverbs.server.timeparse import now_ms

BOB = {"fact": "bob-secret-7777", "page": "bob-page-8888", "fenced": "bob-fenced-9999", "moved": "cancer diagnosis",
       "audit": "bob-reason-6543"}


def _bob(runtime: Runtime) -> Client:
    brain = runtime.brain()
    brain.add_person("bob", None, now_ms())
    token = tokens.mint()
    brain.create_token(name="bob-agent", token_hash=tokens.digest(token), token_hint=tokens.hint(token),
                       scopes="read,write", surface="full", source_id=runtime.source, client_id="token:bob-agent",
                       now=1, person=brain.person_id("bob"))
    grant = tokens.Grant.from_row(brain.live_token(tokens.digest(token)))
    return Client(runtime.mcp_dispatcher("full", grant.caller()))


@pytest.fixture
def team_brain(runtime, local):
    """The owner's world and private material, and bob's (his own, private)."""
    local.ok("put_page", slug="notes/owner", content="# Owner\n\nThe owner's world page.\n")
    local.ok("remember", fact="The owner's own secret 1111", provenance="t", entity="owner-pay", visibility="private")
    bob = _bob(runtime)
    bob.ok("remember", fact=f"Bob's salary {BOB['fact']}", provenance="t", entity="bob-pay", visibility="private")
    bob.ok("remember", fact="Bob's world fact", provenance="t", entity="bob-public")
    bob.ok("put_page", slug="notes/bob", content=f"---\nvisibility: private\n---\n# Bob\n\n{BOB['page']}\n")
    bob.ok("put_page", slug="notes/bob-world",
           content=f"# Bob world\n\nOn the team.\n\n<!-- facts -->\n- [private] pay {BOB['fenced']}\n- public row\n<!-- /facts -->\n")
    brain = runtime.brain()
    with people.acting(people.Actor(brain.person_id("bob"))):
        brain.move_facts(runtime.source, "bob-pay", "bob-money", BOB["moved"], now_ms())
        fid = next(r["id"] for r in brain.query("SELECT id FROM facts WHERE fact = 'Bob''s world fact'"))
        brain.set_fact_visibility(runtime.source, fid, "private", widen=False, reason=BOB["audit"], actor="bob", now=now_ms())
    return runtime


def _new_home(tmp_path: Path, monkeypatch, url: str | None, source: Runtime) -> None:
    """Close `source` and make a new home with an empty brain (at `url`, or its own file) the CLI's."""
    source.close()
    monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path / "restored"))
    if url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
    init_home(tmp_path / "restored")


def _whole(brain, sql: str, params: tuple = ()) -> list:
    """A query over every person's rows, as the brain's owner reads them for a backup."""
    with brain.snapshot(), brain.whole_brain():
        return brain.query(sql, params)


def _files_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


def test_the_owners_backup_leaves_out_bobs_private_material_and_says_so(tmp_path, team_brain, capsys, brain_backend):
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0
    said = capsys.readouterr().out
    text = _files_text(tmp_path / "out")
    sqlite = brain_backend == "sqlite"  # the file's user reads every private fact and page
    for what, secret in BOB.items():
        assert (secret in text) == (sqlite and what != "fenced"), secret
    assert "1111" in text and "Bob world" in text and "public row" in text  # the owner's own, and bob's world rows
    left = Backup.load(tmp_path / "out").manifest["left_out"]["other_people"]
    assert left["people"] == ["bob"] and not left["hidden_by_the_database"]
    assert left["texts_cut"]["pages"] == 1
    if not sqlite:
        assert left["rows"]["facts"] == 2 and left["rows"]["pages"] == 1 and left["rows"]["fact_moves"] == 1
        assert left["rows"]["fact_audit"] == 1
    assert "left out, bob's private material" in said and "--all-people" in said


def test_the_owners_all_people_backup_restores_the_whole_brain_and_its_people(tmp_path, team_brain, monkeypatch, capsys,
                                                                              other_brain_url):
    before = brain_state(team_brain.brain())
    assert main(["export", str(tmp_path / "out"), "--full", "--all-people"]) == 0
    assert "every person's rows included" in capsys.readouterr().out
    text = _files_text(tmp_path / "out" / ".memverbs-backup")
    assert all(secret in text for secret in BOB.values())
    _new_home(tmp_path, monkeypatch, other_brain_url, team_brain)
    assert main(["import", str(tmp_path / "out"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["restore"]["ok"], rep
    rt = Runtime()
    try:
        after = brain_state(rt.brain())
        assert {t.name: after[t.name] for t in backup_tables()} == {t.name: before[t.name] for t in backup_tables()}
        assert [(r["id"], r["name"]) for r in rt.brain().people()] == [(2, "bob")]
        # A person added after the restore is a new person: never bob, never bob's rows.
        assert main(["people", "add", "dave", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["id"] == 3
        assert {r[0] for r in _whole(rt.brain(), "SELECT DISTINCT owner FROM facts")} == {1, 2}
    finally:
        rt.close()


def test_a_person_restored_as_the_owner_by_mapping(tmp_path, team_brain, monkeypatch, capsys, other_brain_url):
    """`--person bob=owner`: bob's rows become the owner's of the new brain (his own backup into his own brain)."""
    assert main(["export", str(tmp_path / "out"), "--full", "--all-people"]) == 0
    _new_home(tmp_path, monkeypatch, other_brain_url, team_brain)
    capsys.readouterr()
    assert main(["import", str(tmp_path / "out"), "--person", "bob=owner", "--person", "owner=olga"]) == 0
    assert "bob's rows are the owner's" in capsys.readouterr().out
    rt = Runtime()
    try:
        local = Client(rt.local_dispatcher())
        assert BOB["fact"] in repr(local.ok("recall", query="salary"))  # the CLI is the owner: bob's private facts are its own
        assert [(r["id"], r["name"]) for r in rt.brain().people()] == [(3, "olga")]
        # olga's private fact: no one else's view holds it
        olga = _whole(rt.brain(), "SELECT owner FROM facts WHERE fact = ?", ("The owner's own secret 1111",))
        assert {r[0] for r in olga} == {3}
    finally:
        rt.close()


@pytest.mark.parametrize("option", ["--person=nobody=owner", "--person=bob=owner", "--role=ghost=x", "--person=bob"])
def test_a_people_mapping_that_cannot_apply_is_refused(tmp_path, team_brain, monkeypatch, capsys, other_brain_url, option):
    assert main(["export", str(tmp_path / "out"), "--full"]) == 0  # the owner's backup: bob's name, none of his rows
    _new_home(tmp_path, monkeypatch, other_brain_url, team_brain)
    capsys.readouterr()
    extra = ["--person", "bob=owner"] if option == "--person=bob=owner" else []
    code = main(["import", str(tmp_path / "out"), option, *extra])
    err = capsys.readouterr().err
    assert code == 1 and "fix:" in err and "Traceback" not in err, err


def test_a_new_person_never_gets_the_id_of_rows_whose_person_is_not_listed(runtime, local):
    """Rows of person 2 with no person 2 listed (a brain restored or copied without its people, as
    before people were backed up): the next person added is 3, never the owner of those rows."""
    bob = _bob(runtime)
    bob.ok("remember", fact="orphaned private 4711", provenance="t", entity="x", visibility="private")
    brain = runtime.brain()
    with brain.write() as db:
        db.execute("DELETE FROM access_tokens")
        db.execute("DELETE FROM people")
    assert brain.add_person("carol", None, now_ms()) == 3
