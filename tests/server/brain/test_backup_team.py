"""Backups, restores and `migrate` of a team's Postgres brain, as a team deploys one.

Three people on one real Postgres: the owner, whose plain `CREATEROLE` role (not a superuser)
owns the brain's tables, and alice and bob, each with a login role of their own
(`people add --role --create-role`). Each writes private facts, private pages, a world page with
a `[private]` row, a move and a visibility change with reasons of their own. Row-level security
holds every session, the owner's included; the server's superuser is the referee that reads
every row. What must hold:

* the owner's `export --full --all-people`, taken while alice and bob keep writing, restores into
  a new database as the owner's login with every table matching, every person as they were
  (roles granted again), and a person added afterwards reads nobody's private rows;
* a brain whose only rows are a teammate's private ones is not empty;
* a teammate's `export --full` holds no one else's private material, and says so; `--all-people`
  is the owner's alone, and its refusal names the role to run it as;
* `migrate` as the owner copies every person's rows both ways; as a teammate it is refused with
  the role it needs; a row the policies refuse says so (not "grant ownership").
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from backups import Backup, brain_state
from helpers import Client
from team import PlainOwner, home_for

from memverbs.cli.main import main
from memverbs.server.brain.factory import open_brain
from memverbs.server.brain.location import BrainLocation
from memverbs.server.brain.transfer import transfer
from memverbs.server.errors import BrainError
from memverbs.server.sync.backup import backup_tables

SECRET = {"owner": "owner-secret-1212", "alice": "alice-secret-3434", "bob": "bob-secret-5656"}
REASON = {"owner": "owner-reason-7878", "alice": "cancer diagnosis", "bob": "bob-reason-9090"}
FENCED = {"owner": "owner-fenced-2323", "alice": "alice-fenced-4545", "bob": "bob-fenced-6767"}


class Team:
    def __init__(self, server, tmp_path, monkeypatch) -> None:
        self.owner = PlainOwner(server)
        self.tmp, self.mp = tmp_path, monkeypatch
        self.url = self.owner.database()
        self.roles = {"owner": self.owner.role}
        self.runtimes = {"owner": home_for(tmp_path / "home-owner", self.url, monkeypatch)}
        for who in ("alice", "bob"):
            self.roles[who] = self.owner.role_name(who)
            self.cli("owner", "people", "add", who, "--role", self.roles[who], "--create-role")
        for who in ("alice", "bob"):
            self.runtimes[who] = home_for(tmp_path / f"home-{who}", self.owner.url(self.db, self.roles[who]), monkeypatch)

    @property
    def db(self) -> str:
        return self.url.split("@/", 1)[1].split("?", 1)[0]

    def use(self, who: str) -> None:
        """Make `who`'s home the CLI's."""
        self.mp.setenv("MEMVERBS_HOME", str(self.tmp / f"home-{who}"))
        self.mp.setenv("MEMVERBS_BRAIN__URL", self.owner.url(self.db, self.roles[who]))

    def cli(self, who: str, *args: str) -> int:
        self.use(who)
        return main([str(a) for a in args])

    def client(self, who: str) -> Client:
        return Client(self.runtimes[who].local_dispatcher())

    def write_private(self, who: str) -> None:
        c = self.client(who)
        c.ok("remember", fact=f"{who}'s salary {SECRET[who]}", provenance="t", entity=f"{who}-pay", visibility="private")
        c.ok("remember", fact=f"{who}'s open fact", provenance="t", entity=f"{who}-open")
        c.ok("put_page", slug=f"notes/{who}-private", content=f"---\nvisibility: private\n---\n# {who}\n\n{SECRET[who]}\n")
        c.ok("put_page", slug=f"notes/{who}-world", content=f"# {who} world\n\nOn the team.\n\n<!-- facts -->\n"
                                                           f"- [private] pay {FENCED[who]}\n- public row\n<!-- /facts -->\n")
        brain, source = self.runtimes[who].brain(), self.runtimes[who].source
        brain.move_facts(source, f"{who}-pay", f"{who}-money", REASON[who], int(time.time() * 1000))
        fid = next(r["id"] for r in brain.query("SELECT id FROM facts WHERE fact = ?", (f"{who}'s open fact",)))
        brain.set_fact_visibility(source, fid, "private", widen=False, reason=REASON[who] + " (audit)", actor=who, now=1)

    def referee(self, url: str) -> dict[str, int]:
        """Every backup table's row count, as the superuser (whom no policy holds) reads it."""
        with psycopg.connect(self.owner.superuser_url(url), autocommit=True) as conn:
            return {t.name: conn.execute(f"SELECT count(*) FROM {t.name}").fetchone()[0] for t in backup_tables()}

    def close(self) -> None:
        for rt in self.runtimes.values():
            rt.close()
        self.owner.close()


@pytest.fixture
def team(request, tmp_path, monkeypatch):
    servers = request.getfixturevalue("pg_servers")
    server = servers.get("pgvector") or servers.get("plain")
    if server is None:
        pytest.skip("no Postgres server on this machine")
    t = Team(server, tmp_path, monkeypatch)
    for who in ("owner", "alice", "bob"):
        t.write_private(who)
    yield t
    t.close()


def _files_text(folder) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


def test_the_owner_backs_up_the_team_under_writes_and_restores_everyone_as_they_were(team, tmp_path, capsys):
    stop = threading.Event()
    written = {"alice": 0, "bob": 0}

    def keep_writing(who: str) -> None:
        c = team.client(who)
        while not stop.is_set():
            n = written[who] = written[who] + 1
            c.ok("put_page", slug=f"busy/{who}-{n}", content=f"# {who} {n}\n\nSee [[notes/{who}-world]].\n"
                                                              + ("---\n" if n % 2 else ""))
            c.ok("remember", fact=f"{who} busy {n}", provenance="t", entity=f"busy/{who}-{n}",
                 visibility="private" if n % 2 else "world")

    workers = [threading.Thread(target=keep_writing, args=(who,)) for who in ("alice", "bob")]
    for w in workers:
        w.start()
    try:
        while min(written.values()) < 2:
            time.sleep(0.02)
        assert team.cli("owner", "export", tmp_path / "out", "--full", "--all-people") == 0
    finally:
        stop.set()
        for w in workers:
            w.join()
    backup = Backup.load(tmp_path / "out")
    assert backup.manifest["left_out"]["other_people"] is None  # the whole brain
    text = _files_text(tmp_path / "out" / ".memverbs-backup")
    assert all(s in text for s in (*SECRET.values(), *REASON.values(), *FENCED.values()))

    # Into a new database, as the owner's login (not a superuser).
    restored_url = team.owner.database()
    home_for(tmp_path / "home-restored", restored_url, team.mp).close()
    capsys.readouterr()
    assert main(["import", str(tmp_path / "out")]) == 0, capsys.readouterr()
    assert "every table matches it" in capsys.readouterr().out
    counts = team.referee(restored_url)
    assert counts == {t["name"]: t["rows"] for t in backup.manifest["tables"]}
    rt = home_for(tmp_path / "home-restored", restored_url, team.mp)
    try:
        state = brain_state(rt.brain())
        assert {t["name"]: (t["rows"], t["sha256"]) for t in backup.manifest["tables"]} == {n: state[n] for n in counts}
        assert [(r["name"], r["role"]) for r in rt.brain().people()] == [("alice", team.roles["alice"]), ("bob", team.roles["bob"])]
    finally:
        rt.close()
    db = restored_url.split("@/", 1)[1].split("?", 1)[0]
    with psycopg.connect(team.owner.url(db, team.roles["alice"]), autocommit=True) as conn:  # her role, granted again
        facts = repr(conn.execute("SELECT fact FROM facts").fetchall())
    assert SECRET["alice"] in facts and SECRET["bob"] not in facts and SECRET["owner"] not in facts
    # A person added after the restore is a new person: nobody's private rows.
    dave = team.owner.role_name("dave")
    team.mp.setenv("MEMVERBS_HOME", str(tmp_path / "home-restored"))
    team.mp.setenv("MEMVERBS_BRAIN__URL", restored_url)
    assert main(["people", "add", "dave", "--role", dave, "--create-role"]) == 0
    with psycopg.connect(team.owner.url(db, dave), autocommit=True) as conn:
        seen = repr(conn.execute("SELECT * FROM facts").fetchall()) + repr(conn.execute("SELECT * FROM pages").fetchall())
    assert not any(s in seen for s in SECRET.values())
    capsys.readouterr()


def test_a_brain_holding_only_a_teammates_private_rows_is_not_empty(team, tmp_path, capsys):
    assert team.cli("owner", "export", tmp_path / "out", "--full", "--all-people") == 0
    url = team.owner.database()
    fresh = home_for(tmp_path / "home-fresh", url, team.mp)
    fresh.brain().grant_person_role(team.roles["bob"], create=False)
    fresh.brain().add_person("bob", team.roles["bob"], 1)
    fresh.close()
    db = url.split("@/", 1)[1].split("?", 1)[0]
    bob = home_for(tmp_path / "home-bob-fresh", team.owner.url(db, team.roles["bob"]), team.mp)
    Client(bob.local_dispatcher()).ok("put_page", slug="bob/diary", content="---\nvisibility: private\n---\n# Diary\n")
    bob.close()
    before = team.referee(url)
    team.mp.setenv("MEMVERBS_HOME", str(tmp_path / "home-fresh"))
    team.mp.setenv("MEMVERBS_BRAIN__URL", url)
    capsys.readouterr()
    assert main(["import", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "restores into an empty brain" in err and "1 pages" in err
    assert team.referee(url) == before


def test_a_teammates_backup_holds_no_one_elses_private_material(team, tmp_path, capsys):
    assert team.cli("bob", "export", tmp_path / "out", "--full") == 0
    said = capsys.readouterr().out
    text = _files_text(tmp_path / "out")
    for who in ("owner", "alice"):
        for secret in (SECRET[who], REASON[who], FENCED[who]):
            assert secret not in text, (who, secret)
    assert SECRET["bob"] in text and REASON["bob"] in text and FENCED["bob"] in text
    left = Backup.load(tmp_path / "out").manifest["left_out"]["other_people"]
    assert left["hidden_by_the_database"] and "not counted" in said
    assert team.cli("bob", "export", tmp_path / "all", "--full", "--all-people") == 1
    err = capsys.readouterr().err
    assert "owner" in err and "fix:" in err
    # His backup restores, into a brain of his own (a SQLite file), with every table matching.
    team.mp.setenv("MEMVERBS_HOME", str(tmp_path / "home-bob-own"))
    team.mp.delenv("MEMVERBS_BRAIN__URL")
    home_for(tmp_path / "home-bob-own", "", team.mp).close()
    assert main(["import", str(tmp_path / "out")]) == 0
    assert "every table matches it" in capsys.readouterr().out


def test_migrate_as_the_owner_copies_every_persons_rows_both_ways(team, tmp_path, capsys):
    source = open_brain(BrainLocation("postgres", url=team.url), read_only=True, pool_size=1)
    to_sqlite = open_brain(BrainLocation("sqlite", path=tmp_path / "copy.db"), create=True)
    try:
        report = transfer(source, to_sqlite)
        assert report.ok, report.as_dict()
        assert {t.table: t.target_rows for t in report.tables if t.table in team.referee(team.url)} == team.referee(team.url)
    finally:
        source.close()
    back_url = team.owner.database()
    back = open_brain(BrainLocation("postgres", url=back_url), create=True, pool_size=2)
    try:
        report = transfer(to_sqlite, back)
        assert report.ok, report.as_dict()
        assert team.referee(back_url) == team.referee(team.url)
    finally:
        back.close()
        to_sqlite.close()
    # As a teammate: refused, with the role that can.
    assert team.cli("bob", "migrate", "--to", str(tmp_path / "bob.db")) == 1
    err = capsys.readouterr().err
    assert team.roles["owner"] in err and "fix:" in err and "ownership" not in err


def test_a_target_the_owner_may_not_build_in_names_the_grant(team, tmp_path, capsys):
    """A database the owner's role does not own (made by an administrator): its public schema takes no
    table from it, and the fix names the grant."""
    team.owner.server.admin(f'CREATE DATABASE "adm_{team.owner.tag}" TEMPLATE template0')
    team.owner.databases.append(f"adm_{team.owner.tag}")
    assert team.cli("owner", "migrate", "--to", team.owner.url(f"adm_{team.owner.tag}")) == 1
    err = capsys.readouterr().err
    assert f'GRANT CREATE ON SCHEMA "public" TO "{team.roles["owner"]}"' in err, err


def test_the_whole_brain_is_the_owners_alone(team):
    """Every table under row-level security admits the owner's whole-brain transaction to every row,
    as the superuser counts them; a teammate's session setting the same flag sees nothing more."""
    with psycopg.connect(team.owner.superuser_url(team.url), autocommit=True) as conn:
        secured = {r[0] for r in conn.execute("SELECT relname FROM pg_class WHERE relrowsecurity AND relkind = 'r' "
                                              "AND relnamespace = 'public'::regnamespace")}
        policed = {r[0] for r in conn.execute("SELECT tablename FROM pg_policies WHERE policyname = 'whole_brain'")}
    assert secured - {"fact_totals"} <= policed
    brain = team.runtimes["owner"].brain()
    with brain.snapshot(), brain.whole_brain():
        whole = {t.name: brain.aggregate(f"SELECT count(*) FROM {t.name}")[0] for t in backup_tables()}
    assert whole == team.referee(team.url)
    with psycopg.connect(team.owner.url(team.db, team.roles["bob"]), autocommit=True) as conn:
        plain = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
        conn.execute("SET memverbs.whole_brain = 'on'")
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == plain < whole["facts"]
    bob = team.runtimes["bob"].brain()
    with pytest.raises(BrainError, match=team.roles["owner"]), bob.snapshot(), bob.whole_brain():
        pass


def test_a_row_the_policies_refuse_says_so(team):
    bob = team.runtimes["bob"].brain()
    with pytest.raises(BrainError) as refused, bob.write() as db:
        db.execute("INSERT INTO facts (source_id, fact, fact_norm, kind, visibility, provenance, valid_from, created_at, owner) "
                   "VALUES ('default', 'forged', 'forged', 'fact', 'private', 't', 1, 1, 2)")
    assert "row-level security" in refused.value.message and "ownership" not in refused.value.fix
