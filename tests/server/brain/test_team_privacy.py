"""A team on one Postgres, private through every door: three people (the owner a plain CREATEROLE role),
two hosts, each person's private material written through their own CLI and synced folder
(benchmarks/team_privacy.py builds and seeds it, and holds the whole matrix).

Each test below is one door that was open: another person's private rows reached a teammate through
it, or a teammate's role could change another's rows through it. The last test runs the matrix: every
read path against every kind of private material, every write on another's rows.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from benchmarks import team_privacy as tp
from benchmarks.team_privacy import marker


@pytest.fixture(scope="module")
def team(pg_servers, tmp_path_factory):
    server = pg_servers.get("pgvector") or pg_servers.get("plain")
    if server is None:
        pytest.skip("no Postgres server on this machine")
    built = tp.build(server, tmp_path_factory.mktemp("team"))
    tp.seed(built)
    yield built
    server.admin(f'DROP DATABASE IF EXISTS "{built.db}" WITH (FORCE)')
    for person in built.people.values():
        server.admin(f'DROP ROLE IF EXISTS "{person.role}"')


def pid(team, who: str) -> int:
    return team.person_id(who)


def world_page(team, who: str) -> int:
    return team.sql(None, "SELECT id FROM pages WHERE slug = %s", (f"notes/{who}-world",))[0][0]


# -- writes a teammate's role could make on another's rows -----------------------------------------


def test_a_role_cannot_take_anothers_world_page_private_as_its_own(team):
    page = world_page(team, "owner")
    with psycopg.connect(team.people["bob"].url, autocommit=True) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("UPDATE pages SET visibility = 'private', owner = memverbs_person() WHERE id = %s", (page,))
    assert team.sql(None, "SELECT owner, visibility FROM pages WHERE id = %s", (page,)) == [(1, "world")]
    refused = json.loads(team.cli("bob", "call", "put_page", json.dumps(
        {"slug": "notes/owner-world", "content": "---\nvisibility: private\n---\n# mine\n"}))[1])
    assert refused["error"] == "scope_denied" and "only a page's owner" in refused["message"]


def test_a_role_cannot_write_a_row_in_anothers_name(team):
    with psycopg.connect(team.people["bob"].url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO facts (source_id, fact, fact_norm, kind, visibility, provenance, valid_from, "
                         "created_at, owner) VALUES ('default', 'forged', 'forged', 'fact', 'world', 'p', 0, 0, 1)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO fact_audit (fact_id, action, reason, actor, at, by_person) "
                         "SELECT id, 'restored', 'forged', 'x', 0, 1 FROM facts LIMIT 1")
    assert team.sql(None, "SELECT count(*) FROM facts WHERE fact = 'forged'") == [(0,)]


def test_a_role_cannot_delete_or_settle_anothers_sync_conflicts(team):
    before = team.sql(None, "SELECT id, resolved_at FROM sync_conflicts ORDER BY id")
    assert len(before) == 3  # one per person
    with psycopg.connect(team.people["bob"].url, autocommit=True) as conn:
        assert conn.execute("DELETE FROM sync_conflicts c USING sync_folders f WHERE f.id = c.folder_id "
                            "AND f.owner <> memverbs_person()").rowcount == 0
        assert conn.execute("UPDATE sync_conflicts SET resolved_at = 1").rowcount == 1  # bob's own, and only his
    team.sql(None, "UPDATE sync_conflicts SET resolved_at = NULL")
    assert team.sql(None, "SELECT id, resolved_at FROM sync_conflicts ORDER BY id") == before


def test_a_planted_synced_file_cannot_delete_anothers_private_page(team):
    """carol's role plants a file row naming bob's private page (in his folder, or in hers): refused
    both ways, so nobody's pass later takes that page for a note that left a folder."""
    slug = f"notes/bob-{marker('slug', 'bob')}"
    bob_folder = team.sql(None, "SELECT id FROM sync_folders WHERE owner = %s", (pid(team, "bob"),))[0][0]
    carol_folder = team.sql(None, "SELECT id FROM sync_folders WHERE owner = %s", (pid(team, "carol"),))[0][0]
    with psycopg.connect(team.people["carol"].url, autocommit=True) as conn:
        for folder in (bob_folder, carol_folder):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("INSERT INTO sync_files (folder_id, rel_path, slug, file_hash, size, mtime_ns, synced_at) "
                             "VALUES (%s, 'planted.md', %s, 'h', 1, 1, 1)", (folder, slug))
    for who in ("carol", "bob"):
        team.cli(who, "sync", team.people[who].folder, "--prefix", who)
    assert team.sql(None, "SELECT deleted_at FROM pages WHERE slug = %s", (slug,)) == [(None,)]


def test_a_teammate_rewrites_a_world_page_and_its_owners_private_rows_stay_theirs(team):
    """A world page with its owner's [private] row, rewritten by a teammate: it was refused as the brain
    being unavailable (the rows were re-inserted in the teammate's session); now the rewrite is saved,
    the owner's row stays the owner's, and the text it replaced is in the page's history."""
    body = json.loads(team.cli("carol", "call", "put_page", json.dumps(
        {"slug": "notes/bob-world", "content": "# bob\n\ncarol was here\n"}))[1])
    assert body["status"] == "updated", body
    bob_view = team.call("bob", "get_page", slug="notes/bob-world")["body"]
    assert "carol was here" in bob_view and marker("fence", "bob") in bob_view
    assert marker("fence", "bob") not in team.call("carol", "get_page", slug="notes/bob-world")["body"]
    new_rows = json.loads(team.cli("carol", "call", "put_page", json.dumps(
        {"slug": "notes/bob-world", "content": "# bob\n\n<!-- facts -->\n- [private] carol's own\n<!-- /facts -->\n"}))[1])
    assert new_rows["error"] == "invalid_params" and "owner" in new_rows["message"]


def test_only_a_facts_owner_changes_its_visibility(team):
    fact = team.call("owner", "remember", fact="the offsite is in Porto", provenance="team")["id"]
    code, _, err = team.cli("bob", "fact-visibility", fact, "private")
    assert code != 0 and "only a fact's owner" in err
    assert team.sql(None, "SELECT owner, visibility FROM facts WHERE id = %s", (int(fact),)) == [(1, "world")]


# -- reads ----------------------------------------------------------------------------------------------


def test_sync_status_and_its_json_show_only_ones_own_folders_and_conflicts(team):
    for flags in ((), ("--json",)):
        out = team.ok("bob", "sync", "--status", *flags)
        assert marker("conflict", "bob") in out  # his own conflict, with the brain's side
        for other in ("owner", "carol"):
            assert marker("folder", other) not in out and marker("conflict", other) not in out


def test_get_page_raw_and_the_history_cut_anothers_private_rows(team):
    for args in (("get-page", "notes/owner-world", "--raw"), ("page-history", "notes/owner-world", "--show", "1")):
        assert marker("fence", "owner") not in team.ok("bob", *args)
        assert marker("fence", "owner") in team.ok("owner", *args)
    raw = team.ok("bob", "get-page", "notes/owner-world", "--raw")
    assert "private rows kept in the brain" in raw  # saved back, the owner's rows stay where it marks them


def test_the_inspector_shows_only_ones_own_conflicts_and_cuts_private_rows(team):
    text = tp.read_inspector(team, "bob")
    for other in ("owner", "carol"):
        assert marker("conflict", other) not in text and marker("fence", other) not in text


def test_conflicts_are_settled_by_their_folders_person_on_its_host(team):
    owner_conflict = tp.conflict_of(team, "owner")
    code, _, err = team.cli("bob", "sync", "--resolve", f"#{owner_conflict}", "--keep", "brain")
    assert code == 1 and "no open conflict" in err
    carol = team.people["carol"]
    carol.host, saved = "host-a", carol.host  # carol's folder is on host-b
    try:
        code, _, err = team.cli("carol", "sync", "--resolve", f"#{tp.conflict_of(team, 'carol')}", "--keep", "brain")
    finally:
        carol.host = saved
    assert code == 1 and "host-b" in err and "not this machine" in err


# -- who a home and a token are --------------------------------------------------------------------------


def test_auth_create_in_a_teammates_home_acts_for_them_and_whoami_and_auth_list_say_so(team):
    listed = json.loads(team.ok("bob", "auth", "list", "--json"))
    assert {t["person"] for t in listed} == {"bob"}  # his tokens, and only his
    assert "person    bob" in team.ok("bob", "whoami")
    owner_list = json.loads(team.ok("owner", "auth", "list", "--json"))
    assert {t["person"] for t in owner_list} == {"owner", "bob", "carol"}  # the owner administers them all


# -- folders ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["owner", "bob"])
def test_a_note_moved_into_a_teammates_folder_keeps_its_page(team, first):
    """The owner's note moves into bob's folder (one host, one disk): whichever pass runs first, the page
    lives on at bob's slug with its facts, and what bob could not see to take along is reported to the
    owner instead of left behind silently."""
    name = f"plan-{first}-first"
    owner, bob = team.people["owner"], team.people["bob"]
    note = owner.folder / f"{name}.md"
    note.write_text(f"# Plan\n\nship {name}\n", encoding="utf-8")
    team.cli("owner", "sync", owner.folder, "--prefix", "owner")
    team.call("owner", "remember", fact=f"{name} ships on Friday", provenance="team", entity=f"owner/{name}")
    team.call("owner", "remember", fact=f"{name} costs too much", provenance="team", entity=f"owner/{name}",
              visibility="private")
    note.rename(bob.folder / f"{name}.md")
    for who in (first, "bob" if first == "owner" else "owner"):
        team.cli(who, "sync", team.people[who].folder, "--prefix", who)
    card = team.call("owner", "entity", name=f"bob/{name}")["card"]
    status = json.loads(team.ok("owner", "sync", "--status", "--json"))["folders"][0]
    stranded = {x["slug"] for x in status["stranded_facts"]}
    if first == "bob":  # the owner's pass saw the move: both facts went with the page
        assert card["active_fact_count"] == 2 and f"owner/{name}" not in stranded
    else:  # bob's pass took the page back; the owner's private fact waits under the old slug, and is named
        assert card["active_fact_count"] == 1 and f"owner/{name}" in stranded
    assert team.call("bob", "entity", name=f"bob/{name}")["card"]["active_fact_count"] == 1  # the world fact


# -- the whole matrix -------------------------------------------------------------------------------------


def test_every_read_path_and_every_write_on_anothers_rows(team):
    """benchmarks/team_privacy.py's matrix on this team: 0 leaks, 0 foreign writes (RESULTS.md has the table)."""
    found = tp.leaks(team)
    assert found.total == 0, "\n".join(found.seen)
    assert found.designed["sql"]["fence"] == 6  # the documented exception: a world page's text is one world row
    results = tp.writes(team)
    assert [r.name for r in results if r.foreign] == []
    assert sum(r.attempts for r in results) >= 200


# -- any write, as a property -------------------------------------------------------------------------------

_TABLES = ("pages", "facts", "links", "timeline", "page_versions", "fact_audit", "fact_moves", "sync_folders",
           "sync_files", "sync_conflicts", "sync_failures", "access_tokens", "aliases", "chunks")


def _invariant(team, victim: str, attacker: str) -> dict:
    """What no other person may change of `victim`'s, whatever they write: the owner and visibility of
    every row of theirs, their private rows whole, their trails (grown only: a rewrite of their world page
    adds a version), their folders' state, and their tokens (the owner's login administers every token)."""
    pid = team.person_id(victim)
    q = lambda sql: set(team.sql(None, sql, (pid,)))  # noqa: E731
    return {
        "pages": q("SELECT id, owner, visibility FROM pages WHERE owner = %s"),
        "private pages": q("SELECT id, slug, body, markdown, deleted_at FROM pages WHERE owner = %s AND visibility = 'private'"),
        "facts": q("SELECT id, owner, visibility, fact, fact_norm, kind, created_at FROM facts WHERE owner = %s"),
        "private facts": q("SELECT id, entity_slug, expired_at, expiry_reason FROM facts WHERE owner = %s AND visibility = 'private'"),
        "private rows": q("SELECT id, from_slug, to_slug FROM links WHERE owner = %s AND private_row = 1"),
        "private timeline rows": q("SELECT id, slug, summary FROM timeline WHERE owner = %s AND private_row = 1"),
        "audit": q("SELECT a.id, a.reason, a.at, a.by_person FROM fact_audit a JOIN facts f ON f.id = a.fact_id WHERE f.owner = %s"),
        "moves": q("SELECT m.id, m.reason, m.moved_at FROM fact_moves m JOIN facts f ON f.id = m.fact_id WHERE f.owner = %s"),
        "history": q("SELECT v.id, v.markdown FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.owner = %s"),
        "folders": q("SELECT f.id, f.root, f.owner, f.slug_prefix, count(sf.rel_path), count(c.id) FROM sync_folders f "
                     "LEFT JOIN sync_files sf ON sf.folder_id = f.id LEFT JOIN sync_conflicts c ON c.folder_id = f.id "
                     "WHERE f.owner = %s GROUP BY f.id"),
        "tokens": set() if attacker == "owner" else q("SELECT id, name, scopes, person, revoked_at FROM access_tokens WHERE person = %s"),
    }


def test_no_write_by_one_role_changes_what_is_anothers(team):
    """Any UPDATE of any column to any of a few values, or any DELETE, of any table a teammate's role is
    granted, by any person's role: what is another's stays as it was (hypothesis picks the writes)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    columns = {t: [r[0] for r in team.sql(None, "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                                                "AND is_generated = 'NEVER' ORDER BY ordinal_position", (t,))] for t in _TABLES}
    values = st.sampled_from([None, "x", "private", "world", 0, 1, 2, 3, 99])
    people = st.sampled_from(tp.PEOPLE)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(attacker=people, victim=people, table=st.sampled_from(_TABLES), action=st.sampled_from(["update", "delete"]),
           column=st.integers(0, 40), value=values)
    def attempt(attacker, victim, table, action, column, value):
        if attacker == victim:
            return
        before = _invariant(team, victim, attacker)
        col = columns[table][column % len(columns[table])]
        sql = f"UPDATE {table} SET {col} = %s" if action == "update" else f"DELETE FROM {table}"
        with psycopg.connect(team.people[attacker].url) as conn:
            try:
                with conn.transaction():
                    conn.execute(sql, (value,) if action == "update" else ())
            except psycopg.Error:
                pass
        after = _invariant(team, victim, attacker)
        # A rewrite of their world page adds a version (the text it replaced): their history only grows.
        assert before.pop("history") <= after.pop("history"), (attacker, victim, sql, value)
        assert after == before, (attacker, victim, sql, value)

    attempt()
