"""People on every backend: tokens act for a person, read:private is what lets one read private rows,
and the CLI's `people` and `auth create --for` commands. (Three people with their own Postgres roles,
and raw SQL as each: tests/server/brain/test_people.py.)"""

from __future__ import annotations

import json

import pytest
from helpers import Client

from memverbs.cli.main import main
from memverbs.server import tokens


def _token_client(runtime, person: str, scopes: str) -> Client:
    brain = runtime.brain()
    token = tokens.mint()
    name = f"{person}-{len(brain.tokens())}"
    brain.create_token(name=name, token_hash=tokens.digest(token), token_hint=tokens.hint(token),
                       scopes=tokens.scopes_text(tokens.parse_scopes(scopes)), surface="full", source_id=runtime.source,
                       client_id=tokens.client_id_for(name), now=1, person=brain.person_id(person))
    grant = tokens.Grant.from_row(brain.live_token(tokens.digest(token)))
    return Client(runtime.mcp_dispatcher("full", grant.caller()))


def _remember_private(client: Client, text: str) -> None:
    client.ok("remember", fact=text, kind="preference", entity="pay", visibility="private", provenance="test")


def test_read_private_lets_the_owners_token_read_private_facts_and_pages(runtime, local):
    _remember_private(local, "salary is 4242")
    local.ok("put_page", slug="notes/secret", content="---\ntitle: Secret\nvisibility: private\n---\n# Secret\n\nvault 9191\n")
    plain = _token_client(runtime, "owner", "read,write")
    reader = _token_client(runtime, "owner", "read,write,read:private")
    assert "4242" not in repr(plain.ok("recall", query="salary"))
    assert plain.err("get_page", slug="notes/secret")["error"] == "not_found"
    assert "4242" in repr(reader.ok("recall", query="salary"))
    assert "9191" in reader.ok("get_page", slug="notes/secret")["body"]


def test_a_token_without_read_private_writes_private_facts_its_person_reads_from_the_cli(runtime, local):
    agent = _token_client(runtime, "owner", "read,write")
    _remember_private(agent, "locker code 8812")
    assert "8812" not in repr(agent.ok("recall", query="locker"))
    assert "8812" in repr(local.ok("recall", query="locker"))


def test_a_token_of_another_person_records_its_person_as_the_owner(runtime):
    runtime.brain().add_person("bob", None, 1)
    _remember_private(_token_client(runtime, "bob", "read,write"), "bob's note 5150")
    row = runtime.brain().query("SELECT owner FROM facts WHERE fact = 'bob''s note 5150'")
    assert [r[0] for r in row] == [2]


def test_read_private_scope_parses_and_implies_read():
    assert tokens.parse_scopes("read:private") == {"read", "read:private"}
    assert tokens.scopes_text(tokens.parse_scopes("write,read:private")) == "read,write,read:private"
    with pytest.raises(ValueError):
        tokens.parse_scopes("read:everything")


def test_people_add_list_and_auth_create_for(home, capsys, brain_backend):
    assert main(["people", "add", "bob"]) == 0
    assert main(["people", "add", "bob"]) == 1  # a name once
    assert main(["people", "add", "Bob!"]) == 2
    capsys.readouterr()
    assert main(["people", "list", "--json"]) == 0
    people = json.loads(capsys.readouterr().out)
    assert [(p["id"], p["name"]) for p in people] == [(1, "owner"), (2, "bob")]
    assert main(["auth", "create", "bob-agent", "--for", "bob", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["person"] == "bob"
    assert main(["auth", "create", "x", "--for", "nobody"]) == 2
    refused = main(["auth", "create", "bob-reader", "--for", "bob", "--scopes", "read,read:private"])
    # A SQLite brain is one person's file: only the owner's tokens read private rows there.
    assert refused == (2 if brain_backend == "sqlite" else 0)
    assert main(["auth", "create", "owner-reader", "--scopes", "read,read:private"]) == 0


@pytest.mark.sqlite_only
def test_people_add_role_is_for_postgres(home, capsys):
    assert main(["people", "add", "bob", "--role", "bob"]) == 2
    assert "Postgres" in capsys.readouterr().err
