"""Remote (MCP) callers never see a private fact or a private page, through any verb or page op."""

import json

import pytest
from helpers import Client, page
from oauth_support import oauth_dispatcher

SECRET_FACT = "FACT-SENTINEL-7731"
SECRET_PAGE = "PAGE-SENTINEL-4409"


@pytest.fixture
def secrets(local):
    page(local, "people/alice", "Alice", body="Alice is public.\n\n<!-- facts -->\n- [private] FENCE-SENTINEL-5521\n- public row\n<!-- /facts -->\n")
    page(local, "people/hidden", "Hidden Person TITLE-SENTINEL", visibility="private", aliases=["Hidey"], body=f"{SECRET_PAGE} lives here.")
    local.ok("remember", fact=f"{SECRET_FACT} commitment", provenance="p", entity="people/alice", kind="commitment", visibility="private")
    local.ok("remember", fact=f"{SECRET_FACT} note", provenance="p", visibility="private")
    local.ok("remember", fact="public fact", provenance="p", entity="people/alice")


@pytest.fixture(params=["mcp", "oauth"])
def remote(request, runtime) -> Client:
    """Every untrusted caller: an MCP connection (stdio), and an OAuth client of `serve --http` (its grant built
    from a live access token exactly as the HTTP gate builds it), so each fence below holds for both."""
    if request.param == "oauth":
        return Client(oauth_dispatcher(runtime))
    return Client(runtime.mcp_dispatcher("full"))


def leaks(body) -> bool:
    text = json.dumps(body)
    # Inputs may be echoed (context_pack's entities, a not_found message); content never is.
    return any(s in text for s in (SECRET_FACT, SECRET_PAGE, "TITLE-SENTINEL", "FENCE-SENTINEL"))


CALLS = [
    ("recall", {}),
    ("recall", {"entity": "people/alice"}),
    ("recall", {"include_expired": True, "limit": 100}),
    ("recall", {"query": "lives here"}),
    ("recall", {"query": "Hidey"}),
    ("entity", {"name": "people/alice"}),
    ("entity", {"name": "Hidden Person TITLE-SENTINEL"}),
    ("entity", {"name": "Hidey"}),
    ("entity", {"name": "hidden"}),
    ("context_pack", {"entities": "people/alice,people/hidden,Hidey", "include_private": True}),
    ("delta", {"since": "1970-01-01T00:00:00Z", "entities": "people/alice,people/hidden", "include_private": True}),
    ("search", {"query": "lives here"}),
    ("list_pages", {}),
    ("get_page", {"slug": "people/hidden"}),
]


@pytest.mark.parametrize(("tool", "params"), CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)])
def test_remote_never_sees_private(secrets, remote, tool, params):
    body, _ = remote(tool, **params)
    assert not leaks(body), body


def test_private_page_is_not_found_for_remote(secrets, remote, local):
    assert remote.err("get_page", slug="people/hidden")["error"] == "not_found"
    assert local.ok("get_page", slug="people/hidden")["visibility"] == "private"


def test_trusted_local_sees_private(secrets, local):
    assert SECRET_FACT in json.dumps(local.ok("recall"))
    card = local.ok("entity", name="people/alice")["card"]
    assert SECRET_FACT in json.dumps(card["open_threads"])
    assert local.ok("entity", name="Hidey")["card"]["entity"]["slug"] == "people/hidden"


def test_remote_card_counts_only_world_facts(secrets, remote, local):
    assert remote.ok("entity", name="people/alice")["card"]["active_fact_count"] == 1
    assert local.ok("entity", name="people/alice")["card"]["active_fact_count"] == 2


def test_operator_can_open_private_pages_to_remote(secrets, runtime, monkeypatch):
    from helpers import Client

    monkeypatch.setenv("MEMVERBS_REMOTE_PRIVATE_PAGES", "1")
    opened = Client(runtime.mcp_dispatcher("full"))
    assert opened.ok("entity", name="Hidey")["found"] is True
    assert SECRET_FACT not in json.dumps(opened.ok("recall"))  # facts stay world-only regardless


def test_summary_passes_the_privacy_fences(local, remote):
    page(local, "people/fenced", "Fenced", body=(
        "<!-- takes -->\nTAKE: I think Fenced is wrong.\n<!-- /takes -->\n"
        "<!-- facts -->\n- [private] Fenced earns 1M FENCE-SENTINEL.\n- Fenced lives in Lisbon.\n<!-- /facts -->\n"
    ))
    assert remote.ok("entity", name="people/fenced")["card"]["summary"] == "Fenced lives in Lisbon."
    assert local.ok("entity", name="people/fenced")["card"]["summary"] == "Fenced earns 1M FENCE-SENTINEL."


def test_keyword_search_never_surfaces_private_fence_rows(local, remote):
    """The keyword index holds the whole body; untrusted results must not show — or match on — private rows."""
    page(local, "places/office", "Office", body=(
        "The office is on the third floor.\n\n<!-- facts -->\n- [private] The door code is DOOR-SENTINEL-99.\n"
        "- Visitors sign in at reception.\n<!-- /facts -->\n"
    ))
    assert remote.ok("recall", query="door code")["results"] == []
    assert remote.ok("search", query="DOOR-SENTINEL-99")["results"] == []
    floor = remote.ok("recall", query="office floor")["results"][0]
    assert floor["slug"] == "places/office" and "DOOR-SENTINEL" not in json.dumps(floor)
    assert "DOOR-SENTINEL" not in remote.ok("get_page", slug="places/office")["body"]
    assert "DOOR-SENTINEL" in local.ok("get_page", slug="places/office")["body"]
    assert local.ok("recall", query="door code")["results"][0]["slug"] == "places/office"
