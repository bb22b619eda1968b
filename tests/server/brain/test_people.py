"""Privacy per person: a private fact or page is read by the person who wrote it, and nobody else.

Three people on one real Postgres — the owner (who owns the brain's tables), bob and carol, each
with their own login role — through their CLIs (a home logged in as their role), their tokens (with
and without read:private) and a plain SQL session as each role. Row-level security is what holds:
the raw SQL sessions see exactly what memverbs shows. The single-user default (the owner, or a
SQLite file) is checked unchanged by the rest of the suite; the SQLite cases here pin the
app-level rules that hold on both backends.
"""

from __future__ import annotations

import os
import uuid

import httpx
import psycopg
import pytest
from helpers import Client, init_home

from memverbs.server import tokens
from memverbs.server.brain.people_store import PersonTaken
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime

SECRETS = {"owner": "owner-salary-271828", "bob": "bob-salary-314159", "carol": "carol-salary-161803"}
# Private facts-fence rows of a world page: kept in the page's (world) text, cut by memverbs from every
# reader but the page's owner — an application rule, which a SQL session reading the text whole is not held by.
FENCED = {"owner": "owner-bonus-5772", "bob": "bob-bonus-6931", "carol": "carol-bonus-1414"}


def _home(tmp_path, monkeypatch, name: str, url: str) -> Runtime:
    root = tmp_path / f"home-{name}"
    monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
    init_home(root)
    return Runtime(Home(root))


@pytest.fixture
def team(request, tmp_path, monkeypatch):
    """A Postgres brain owned by a plain (non-superuser) role, with bob and carol added with roles
    of their own, and each person's CLI runtime logged in as their role."""
    servers = request.getfixturevalue("pg_servers")
    server = servers.get("pgvector") or servers.get("plain")
    if server is None:
        pytest.skip("no Postgres server on this machine")
    tag = uuid.uuid4().hex[:8]
    roles = {"owner": f"own_{tag}", "bob": f"bob_{tag}", "carol": f"carol_{tag}"}
    server.admin(f'CREATE ROLE "{roles["owner"]}" LOGIN CREATEROLE')
    db = f"people_{tag}"
    server.admin(f'CREATE DATABASE "{db}" OWNER "{roles["owner"]}" TEMPLATE template0')
    urls = {who: server.url(db, user=role) for who, role in roles.items()}
    runtimes: dict[str, Runtime] = {"owner": _home(tmp_path, monkeypatch, "owner", urls["owner"])}
    brain = runtimes["owner"].brain()
    for who in ("bob", "carol"):
        brain.grant_person_role(roles[who], create=True)
        brain.add_person(who, roles[who], 1)
    for who in ("bob", "carol"):
        runtimes[who] = _home(tmp_path, monkeypatch, who, urls[who])
    yield {"server": server, "roles": roles, "urls": urls, "runtimes": runtimes, "db": db}
    for rt in runtimes.values():
        rt.close()
    server.admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    for who in ("bob", "carol", "owner"):
        server.admin(f'DROP ROLE IF EXISTS "{roles[who]}"')


def _cli(team, who: str) -> Client:
    return Client(team["runtimes"][who].local_dispatcher())


def _mint(team, who: str, scopes: str) -> str:
    """A token minted by the owner's CLI for `who` (what `memverbs auth create --for WHO` does)."""
    runtime = team["runtimes"]["owner"]
    brain = runtime.brain()
    token = tokens.mint()
    name = f"{who}-{scopes.replace(',', '-').replace(':', '_')}-{uuid.uuid4().hex[:4]}"
    brain.create_token(name=name, token_hash=tokens.digest(token), token_hint=tokens.hint(token),
                       scopes=tokens.scopes_text(tokens.parse_scopes(scopes)), surface="full", source_id=runtime.source,
                       client_id=tokens.client_id_for(name), now=1, person=brain.person_id(who) or 0)
    return token


def _token(team, who: str, scopes: str) -> Client:
    """A token for `who`, resolved as the HTTP server resolves a bearer, called in-process."""
    runtime = team["runtimes"]["owner"]
    grant = tokens.Grant.from_row(runtime.brain().live_token(tokens.digest(_mint(team, who, scopes))))
    return Client(runtime.mcp_dispatcher("full", grant.caller()))


def _write_private(client: Client, who: str) -> None:
    client.ok("remember", fact=f"{who}'s salary is {SECRETS[who]}", kind="preference", entity=f"{who}-pay",
              visibility="private", provenance="test")
    client.ok("put_page", slug=f"notes/{who}-private",
              content=f"---\ntitle: {who} private notes\nvisibility: private\n---\n# {who}\n\nsecret {SECRETS[who]}\n")
    # A world page whose private facts-fence row is its writer's: the row is cut from its text for everyone else.
    client.ok("put_page", slug=f"notes/{who}-world",
              content=f"---\ntitle: {who} world notes\n---\n# {who}\n\nOn the team.\n\n<!-- facts -->\n"
                      f"- [private] pay {FENCED[who]} [[notes/{who}-private]]\n- [private] 2026-01-02: raise {FENCED[who]}\n"
                      "- public row\n<!-- /facts -->\n")


def _seen(client: Client, who: str) -> str:
    """Everything `client` can read about `who`'s rows, as one text."""
    parts = [
        client.ok("recall", query="salary", limit=50),
        client.ok("recall", query=SECRETS[who], limit=50),
        client.ok("recall", query=FENCED[who], limit=50),
        client.ok("search", query=FENCED[who]),
        client.ok("entity", name=f"{who}-pay"),
        client.ok("search", query=SECRETS[who]),
        client.ok("list_pages", limit=100),
        client.ok("delta", since="2000-01-01T00:00:00Z", include_private=True),
        client.ok("context_pack", entities=f"{who}-pay", include_private=True),
    ]
    for slug in (f"notes/{who}-private", f"notes/{who}-world"):
        parts.append(client("get_page", slug=slug)[0])
    parts.append(client.ok("entity", name=f"{who} world notes"))
    return repr(parts)


def _raw(team, who: str, tables: tuple[str, ...] = ("facts", "pages", "page_versions", "links", "timeline", "chunks",
                                                      "aliases", "fact_vectors")) -> str:
    """Every row a plain SQL session as `who`'s role reads from the tables that hold private text."""
    with psycopg.connect(team["urls"][who], autocommit=True) as conn:
        rows = [conn.execute(f"SELECT * FROM {table}").fetchall() for table in tables]
    return repr(rows)


def test_three_people_see_only_their_own_private_rows(team):
    for who in ("owner", "bob", "carol"):
        _write_private(_cli(team, who), who)
    for reader in ("owner", "bob", "carol"):
        cli = _seen(_cli(team, reader), reader)
        assert SECRETS[reader] in cli, f"{reader}'s CLI must read their own private fact and page"
        assert FENCED[reader] in cli, f"{reader}'s CLI must read their own page's private rows"
        raw = _raw(team, reader)
        assert SECRETS[reader] in raw
        assert f"notes/{reader}-private" in _raw(team, reader, ("links",)), "the owner's private link row"
        for other in SECRETS:
            if other == reader:
                continue
            seen = _seen(_cli(team, reader), other)
            assert SECRETS[other] not in seen, f"{reader}'s CLI read {other}'s private fact or page"
            assert FENCED[other] not in seen, f"{reader}'s CLI read {other}'s page's private rows"
            assert SECRETS[other] not in raw, f"a SQL session as {reader}'s role read {other}'s private rows"
            # The page's private rows as the brain stores them (its private timeline and links rows) are held too.
            rows = _raw(team, reader, ("timeline", "links", "chunks"))
            assert FENCED[other] not in rows and f"notes/{other}-private" not in rows


def test_a_read_private_token_reads_its_persons_rows_and_nobody_elses(team):
    for who in ("owner", "bob", "carol"):
        _write_private(_cli(team, who), who)
    for who in ("owner", "bob", "carol"):
        with_private = _token(team, who, "read,write,read:private")
        plain = _token(team, who, "read,write")
        assert SECRETS[who] in _seen(with_private, who)
        assert FENCED[who] in _seen(with_private, who)
        assert SECRETS[who] not in _seen(plain, who), "a token without read:private read a private row"
        assert FENCED[who] not in _seen(plain, who), "a token without read:private read a page's private rows"
        for other in SECRETS:
            if other != who:
                seen = _seen(with_private, other)
                assert SECRETS[other] not in seen, f"{who}'s read:private token read {other}'s rows"
                assert FENCED[other] not in seen, f"{who}'s read:private token read {other}'s page's private rows"


def test_a_token_without_read_private_writes_private_facts_it_cannot_read_back(team):
    agent = _token(team, "bob", "read,write")
    agent.ok("remember", fact="bob's locker code is 8812", kind="preference", entity="bob-locker",
             visibility="private", provenance="agent")
    assert "8812" not in repr(agent.ok("recall", query="locker", limit=10))
    assert "8812" in repr(_cli(team, "bob").ok("recall", query="locker", limit=10)), "the owner of the fact reads it"
    assert "8812" in repr(_token(team, "bob", "read:private").ok("recall", query="locker", limit=10))
    assert "8812" not in repr(_cli(team, "carol").ok("recall", query="locker", limit=10))
    assert "8812" not in repr(_cli(team, "owner").ok("recall", query="locker", limit=10))


def test_nobody_overwrites_or_forgets_anothers_private_page_or_fact(team):
    _write_private(_cli(team, "bob"), "bob")
    carol = _cli(team, "carol")
    # A slug taken by bob's private page is refused to carol as any page she may not change; his page stands.
    refused = carol.err("put_page", slug="notes/bob-private", content="---\ntitle: mine\n---\n# mine\n")
    assert refused["error"] == "scope_denied"
    assert SECRETS["bob"] in repr(_cli(team, "bob").ok("get_page", slug="notes/bob-private"))
    bob_fact = _cli(team, "bob").ok("recall", query="salary", limit=5)
    fact_id = next(f["id"] for f in bob_fact["facts"] if SECRETS["bob"] in f["fact"])
    missing = carol.err("forget", id=str(fact_id), reason="test")
    assert missing["error"] == "not_found"
    assert SECRETS["bob"] in repr(_cli(team, "bob").ok("recall", query="salary", limit=5))
    # And straight SQL as carol's role cannot change or delete it either.
    with psycopg.connect(team["urls"]["carol"], autocommit=True) as conn:
        assert conn.execute("UPDATE facts SET fact = 'x' WHERE visibility = 'private'").rowcount == 0
        assert conn.execute("DELETE FROM pages WHERE visibility = 'private'").rowcount == 0
        with pytest.raises(psycopg.Error):  # nor write a private row in bob's name
            conn.execute("INSERT INTO facts (source_id, fact, fact_norm, kind, visibility, provenance, valid_from, created_at, owner) "
                         "SELECT 'x', 'f', 'f', 'preference', 'private', 'p', 0, 0, id FROM people WHERE name = 'bob'")


def test_people_add_refuses_a_name_twice(team):
    brain = team["runtimes"]["owner"].brain()
    with pytest.raises(PersonTaken):
        brain.add_person("bob", None, 2)
    assert [r["name"] for r in brain.people()] == ["bob", "carol"]





def test_a_world_fact_is_not_a_teammates_to_take_private(team):
    """Only a fact's owner changes its visibility: a teammate's world fact is the team's to forget, never
    to hide from the team as their own (it was, before: the fact became the private fact of who hid it)."""
    from memverbs.server.errors import FactEditRefused

    _cli(team, "owner").ok("remember", fact="the team offsite is in Lisbon", kind="event", entity="offsite",
                           provenance="test")
    bob_brain = team["runtimes"]["bob"].brain()
    fact_id = int(_cli(team, "bob").ok("recall", query="Lisbon")["facts"][0]["id"])
    with pytest.raises(FactEditRefused) as refused:
        bob_brain.set_fact_visibility(team["runtimes"]["bob"].source, fact_id, "private", widen=False,
                                      reason="test", actor="bob", now=2)
    assert refused.value.code == "not_yours"
    with psycopg.connect(team["urls"]["bob"], autocommit=True) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("UPDATE facts SET visibility = 'private', owner = (SELECT id FROM people WHERE name = 'bob') "
                     "WHERE id = %s", (fact_id,))
    assert "Lisbon" in repr(_cli(team, "carol").ok("recall", query="Lisbon"))
    owner_brain = team["runtimes"]["owner"].brain()
    assert owner_brain.set_fact_visibility(team["runtimes"]["owner"].source, fact_id, "private", widen=False,
                                           reason="test", actor="owner", now=3)
    assert "Lisbon" in repr(_cli(team, "owner").ok("recall", query="Lisbon"))
    assert "Lisbon" not in repr(_cli(team, "bob").ok("recall", query="Lisbon"))
    assert "Lisbon" not in _raw(team, "carol", ("facts",))


def test_over_http_a_server_acts_for_each_tokens_person(team):
    """A real `serve --http` on the owner's login: each call runs as its token's person."""
    from benchmarks.http_load import HEADERS, RemoteServer, call_body

    def recall(server, token: str, query: str) -> str:
        reply = httpx.post(server.url, json=call_body(1, "recall", {"query": query}),
                           headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30)
        assert reply.status_code == 200, reply.text
        return reply.text

    for who in ("owner", "bob"):
        _write_private(_cli(team, who), who)
    runtime = team["runtimes"]["owner"]
    env = {**os.environ, "MEMVERBS_BRAIN__URL": team["urls"]["owner"]}
    bob_reader, bob_plain = _mint(team, "bob", "read,read:private"), _mint(team, "bob", "read,write")
    owner_reader = _mint(team, "owner", "read,read:private")
    with RemoteServer(runtime.home.root, env=env) as server:
        assert SECRETS["bob"] in recall(server, bob_reader, "salary")
        assert SECRETS["owner"] not in recall(server, bob_reader, "salary")
        assert SECRETS["bob"] not in recall(server, bob_plain, "salary")
        assert SECRETS["owner"] in recall(server, owner_reader, "salary")
        assert SECRETS["bob"] not in recall(server, owner_reader, "salary")
        assert SECRETS["bob"] in recall(server, bob_reader, "salary")  # the pooled connections switch back


def test_doctor_says_who_each_login_is_and_warns_of_a_login_that_bypasses_the_policies(team):
    from memverbs.server.brain.postgres import PostgresBrain
    from memverbs.server.brain.postgres_health import people_row

    for who, expected in (("owner", "is owner"), ("bob", "is bob")):
        brain = PostgresBrain.open(team["urls"][who])
        try:
            name, status, detail, _ = people_row(brain)
            assert (name, status) == ("people", "ok") and expected in detail, detail
        finally:
            brain.close()
    superuser = PostgresBrain.open(team["server"].url(team["db"]))
    try:
        _, status, detail, fix = people_row(superuser)
        assert status == "warn" and "bypasses row-level security" in detail and "superuser" in fix
    finally:
        superuser.close()


def test_an_export_with_private_material_leaves_out_another_persons_private_rows(team, tmp_path):
    from memverbs.server.sync.exporter import export_brain

    for who in ("owner", "bob"):
        _write_private(_cli(team, who), who)
    runtime = team["runtimes"]["bob"]
    export_brain(runtime.brain(), runtime.source, str(tmp_path / "out"), include_private=True)
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*.md"))
    assert SECRETS["bob"] in written and FENCED["bob"] in written
    assert SECRETS["owner"] not in written and FENCED["owner"] not in written
    assert "owner world notes" in written  # the page itself is world: it is written, without the owner's rows


def test_each_person_ranks_facts_over_the_facts_they_may_see(team):
    """recall's BM25 counts the facts a session sees (world ones and its person's private ones): each
    person's scores are the formula over exactly the facts their own SQL session reads."""
    from bm25 import bm25

    from memverbs.server.brain.base import FactFilter, SearchQuery
    from memverbs.server.terms import query_terms
    from memverbs.server.timeparse import now_ms

    for who in ("owner", "bob", "carol"):
        _write_private(_cli(team, who), who)
        _cli(team, who).ok("remember", fact=f"{who} shares a salary note with the team", provenance="test")
    terms = query_terms("salary team note")
    for who in ("owner", "bob", "carol"):
        with psycopg.connect(team["urls"][who], autocommit=True) as conn:
            seen = conn.execute("SELECT id, search_terms, expired_at FROM facts ORDER BY id").fetchall()
        live = {i for i, _, expired in seen if expired is None}
        expected = [(s, i) for s, i in bm25([(i, t) for i, t, _ in seen], terms) if i in live]
        ranked = team["runtimes"][who].brain().facts_ranked(
            "default", FactFilter("recent", now_ms(), False, True, 50), SearchQuery.of(terms, "any"), limit=50)
        assert [r["id"] for r in ranked] == [i for _, i in expected], who
        assert [r["score"] for r in ranked] == pytest.approx([s for s, _ in expected], rel=1e-12), who
