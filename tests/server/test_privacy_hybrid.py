"""With an embedding provider, remote callers still never see a private fact, page or fence row."""

import json

import pytest
from helpers import page
from provider_fakes import clients, hashing_runtime

SENTINELS = ("FACT-SENTINEL", "PAGE-SENTINEL", "TITLE-SENTINEL", "FENCE-SENTINEL")


@pytest.fixture
def remote(home):
    rt = hashing_runtime(home)
    local, remote = clients(rt)
    page(local, "people/alice", "Alice", body="Alice is public.\n\n<!-- facts -->\n- [private] FENCE-SENTINEL-5521 lives here\n- public row\n<!-- /facts -->\n")
    page(local, "people/hidden", "Hidden Person TITLE-SENTINEL", visibility="private", aliases=["Hidey"], body="PAGE-SENTINEL-4409 lives here.")
    local.ok("remember", fact="FACT-SENTINEL-7731 lives here", provenance="p", entity="people/alice", visibility="private")
    yield remote
    rt.close()


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("recall", {"query": "lives here"}),
        ("recall", {"query": "PAGE-SENTINEL-4409 lives here"}),
        ("recall", {"query": "FENCE-SENTINEL-5521"}),
        ("recall", {"query": "Hidey"}),
        ("search", {"query": "hidden person lives here"}),
        ("remember", {"fact": "FACT-SENTINEL-7731 lives here", "provenance": "p", "entity": "people/alice"}),
        ("remember", {"fact": "FACT-SENTINEL-7731 lives here", "provenance": "p", "entity": "people/alice", "visibility": "private"}),
    ],
)
def test_remote_never_sees_private_through_the_hybrid_path(remote, tool, params):
    body, _ = remote(tool, **params)
    assert "search_degraded" not in body
    if tool == "remember":
        assert body["status"] == "inserted"  # a `duplicate` would tell a remote caller the private fact exists
    text = json.dumps({k: v for k, v in body.items() if k != "fact"})
    assert not any(s in text for s in SENTINELS if s not in json.dumps(params)), body
