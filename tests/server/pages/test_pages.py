"""Page operations: markdown in, cards out."""

from helpers import page


def test_put_page_parses_frontmatter_links_and_timeline(local):
    content = (
        "---\ntitle: Alice Example\ntype: person\naliases: [Ali, '@alice']\nsummary: Runs payments.\n"
        "links: {works_at: companies/acme, invested_in: [companies/x, companies/y]}\n---\n"
        "# Alice\nSee [[projects/atlas|Atlas]] and [notes](./notes/alice.md) and [web](https://example.com).\n\n"
        "## Timeline\n- 2026-08-01: Joined payments\n- **2026-09-02** — Shipped v2\n\n## Other\n- 2026-10-01: not timeline\n"
    )
    body = local.ok("put_page", slug="people/alice", content=content)
    assert body["status"] == "created" and body["aliases"] == 2 and body["links"] == 5 and body["timeline_entries"] == 2
    got = local.ok("get_page", slug="people/alice")
    targets = {(link["to"], link["type"], link["link_source"]) for link in got["links"]}
    assert targets == {
        ("companies/acme", "works_at", "frontmatter"),
        ("companies/x", "invested_in", "frontmatter"),
        ("companies/y", "invested_in", "frontmatter"),
        ("projects/atlas", "references", "markdown"),
        ("notes/alice", "references", "markdown"),
    }
    assert [t["date"] for t in got["timeline"]] == ["2026-09-02", "2026-08-01"]
    assert got["aliases"] == ["@alice", "ali"]
    assert local.ok("put_page", slug="people/alice", content=content)["status"] == "updated"
    assert len(local.ok("get_page", slug="people/alice")["links"]) == 5  # replaced, not doubled


def test_manual_additions_survive_a_rewrite(local):
    page(local, "people/bob", "Bob")
    local.ok("add_alias", slug="people/bob", alias="Bobby")
    local.ok("add_timeline_entry", slug="people/bob", date="2026-01-02", summary="Met")
    page(local, "people/bob", "Bob", body="new body")
    got = local.ok("get_page", slug="people/bob")
    assert got["aliases"] == ["bobby"] and got["timeline"][0]["summary"] == "Met"


def test_bad_input_is_invalid_params_and_writes_nothing(local):
    err = local.err("put_page", slug="People/Bad Slug", content="x")
    assert err["error"] == "invalid_params" and "lowercase" in err["suggestion"]
    err = local.err("put_page", slug="people/x", content="---\ntitle: [unclosed\n---\nbody")
    assert err["error"] == "invalid_params" and "frontmatter" in err["message"]
    err = local.err("put_page", slug="people/x", content="---\n- just\n- a list\n---\n")
    assert err["error"] == "invalid_params"
    assert local.ok("list_pages")["pages"] == []
    err = local.err("add_timeline_entry", slug="people/x", date="Aug 1", summary="s")
    assert err["error"] == "invalid_params"
    assert local.err("add_timeline_entry", slug="people/none", date="2026-08-01", summary="s")["error"] == "not_found"


def test_delete_is_soft_and_put_revives(local, runtime):
    page(local, "people/gone", "Gone")
    assert local.ok("delete_page", slug="people/gone")["deleted"] is True
    assert local.err("get_page", slug="people/gone")["error"] == "not_found"
    assert runtime.brain().one("SELECT count(*) FROM pages WHERE slug = 'people/gone'")[0] == 1
    assert page(local, "people/gone", "Gone")["status"] == "created"


def test_list_pages_filters(local):
    page(local, "people/a", "A", type="person")
    page(local, "companies/b", "B", type="company")
    assert [p["slug"] for p in local.ok("list_pages", type="person")["pages"]] == ["people/a"]
    assert [p["slug"] for p in local.ok("list_pages", prefix="companies/")["pages"]] == ["companies/b"]
    assert local.ok("list_pages", limit=1)["total"] == 1


def test_search_op_shares_the_result_shape(local):
    page(local, "companies/acme", "Acme", body="anvils and rockets")
    result = local.ok("search", query="rockets")["results"][0]
    assert set(result) == {"slug", "title", "chunk", "evidence", "create_safety", "provenance"}


def test_whoami(remote):
    me = remote.ok("whoami")
    assert me == {"source_id": "default", "client_id": "remote", "remote": True, "scopes": ["read", "write"], "surface": "full",
                  "person": "owner", "protocol_version": 1}


def test_sources_are_isolated(local, runtime, monkeypatch):
    from helpers import Client

    from memverbs.server.runtime import Runtime

    page(local, "people/alice", "Alice")
    local.ok("remember", fact="default fact", provenance="p", entity="people/alice")
    monkeypatch.setenv("MEMVERBS_SOURCE", "work")
    other_rt = Runtime(runtime.home)
    try:
        other = Client(other_rt.local_dispatcher())
        assert other.ok("entity", name="people/alice")["found"] is False
        assert other.ok("recall")["total"] == 0
        assert other.ok("list_pages")["pages"] == []
        page(other, "people/alice", "Alice at work")
        assert other.ok("entity", name="people/alice")["card"]["entity"]["title"] == "Alice at work"
    finally:
        other_rt.close()
    assert local.ok("entity", name="people/alice")["card"]["entity"]["title"] == "Alice"


def test_a_yaml_list_title_is_its_items(local):
    """`title: [closed]` is YAML for a list: the page's title is "closed", not Python's "['closed']"."""
    assert local.ok("put_page", slug="topics/status", content="---\ntitle: [closed]\ntype: [note, log]\n---\nbody\n")["title"] == "closed"
    got = local.ok("get_page", slug="topics/status")
    assert (got["title"], got["type"]) == ("closed", "note, log")
