"""delta: keyset cursor, session lanes, at-least-once, budget, privacy (B3), facts overflow (B4)."""

from helpers import Client, page

from memverbs.server.brain.base import PageDraft
from memverbs.server.timeparse import iso, now_ms, parse_instant

EPOCH = "1970-01-01T00:00:00Z"


def bulk_pages(runtime, count: int, at: int, prefix: str = "bulk/p") -> None:
    """Pages sharing one updated_at, as a bulk sync stamps them."""
    brain = runtime.brain()
    for n in range(count):
        slug = f"{prefix}{n:03d}"
        draft = PageDraft(slug, f"P {n}", "note", "", {}, None, "world")
        brain.save_page("default", slug, lambda _existing, draft=draft: draft, at)


def test_needs_since_or_session(remote):
    err = remote.err("delta")
    assert err["error"] == "invalid_params"
    assert err["message"] == "delta requires `since` (ISO 8601) or a `session_id` with an established cursor."
    assert err["suggestion"].strip()


def test_since_is_normalised_and_bad_since_rejected(remote):
    assert remote.ok("delta", since=EPOCH)["since"] == "1970-01-01T00:00:00.000Z"
    err = remote.err("delta", since="x" * 100)
    assert err["message"] == f'delta: since is not a parseable timestamp: "{"x" * 60}"'


def test_since_takes_what_the_cli_takes(local, remote):
    """`since: "30d"` over MCP (which the CLI's --since always took) was invalid_params: the wire reads it
    with the CLI's own parser now, an additive leniency (docs/protocol.md Part B)."""
    page(local, "notes/fresh", "Fresh")
    for since in ("30d", "-30d", "4w", "30 days ago", "yesterday"):
        body = remote.ok("delta", since=since)
        assert now_ms() - 31 * 86_400_000 <= parse_instant(body["since"]) <= now_ms(), since
        assert "notes/fresh" in [p["slug"] for p in body["pages"]], since
    assert remote.err("delta", since="30 parsecs")["error"] == "invalid_params"
    assert remote.ok("context_pack", entities="notes/fresh", since="30d")["protocol_version"] == 1


def test_response_shape_and_text(local, remote):
    page(local, "people/alice", "Alice")
    local.ok("remember", fact="alice moved", provenance="p", entity="people/alice")
    body = remote.ok("delta", since=EPOCH)
    assert list(body) == ["protocol_version", "since", "pages", "facts", "threads", "text", "has_more", "next_cursor",
                          "redelivery"]
    assert body["pages"][0]["slug"] == "people/alice" and list(body["pages"][0]) == ["slug", "source_id", "title", "updated_at"]
    assert body["facts"][0]["fact"] == "alice moved" and "id" not in body["facts"][0]
    assert body["next_cursor"] == {"since": body["pages"][0]["updated_at"], "slug": "people/alice"}
    lines = body["text"].split("\n")
    assert lines[2] == "## Pages changed since 1970-01-01T00:00:00.000Z"
    assert lines[3] == f"- **Alice** → `people/alice` ({body['pages'][0]['updated_at']})"
    day = body["facts"][0]["valid_from"][:10]
    assert "## New facts since 1970-01-01T00:00:00.000Z" in lines and f"- {day}: alice moved [people/alice]" in lines


def test_keyset_drains_a_same_timestamp_cluster(runtime, remote):
    at = now_ms() - 60_000
    bulk_pages(runtime, 60, at)
    first = remote.ok("delta", since=EPOCH)
    assert len(first["pages"]) == 50 and first["has_more"] is True
    assert first["next_cursor"] == {"since": iso(at), "slug": "bulk/p049"}
    second = remote.ok("delta", since=first["next_cursor"]["since"], since_slug=first["next_cursor"]["slug"])
    assert [p["slug"] for p in second["pages"]] == [f"bulk/p{n:03d}" for n in range(50, 60)]
    assert second["has_more"] is False


def test_session_first_wake_then_changes(local, remote):
    first = remote.ok("delta", session_id="s1", budget_tokens=100)
    assert first["pages"] == [] and first["text"] == "" and first["has_more"] is False
    assert first["next_cursor"] == {"since": first["since"], "slug": ""}
    assert (first["budget_tokens"], first["budget_used"], first["dropped_count"]) == (100, 0, 0)
    page(local, "people/new", "New")
    second = remote.ok("delta", session_id="s1")
    assert [p["slug"] for p in second["pages"]] == ["people/new"]
    third = remote.ok("delta", session_id="s1")
    assert third["pages"] == []  # delivered pages do not come back unless they change


def test_session_cursor_is_at_least_once_under_budget(runtime, remote):
    remote.ok("delta", session_id="s2")
    bulk_pages(runtime, 5, now_ms() + 1000, prefix="q/p")
    got = []
    for _ in range(10):
        body = remote.ok("delta", session_id="s2", budget_tokens=5)
        got += [p["slug"] for p in body["pages"]]
        if not body["has_more"]:
            break
    assert got == [f"q/p{n:03d}" for n in range(5)]


def test_budget_too_small_for_one_page_does_not_advance(runtime, remote):
    remote.ok("delta", session_id="s3")
    bulk_pages(runtime, 2, now_ms() + 1000, prefix="big/a-rather-long-slug-to-cost-tokens-")
    starved = remote.ok("delta", session_id="s3", budget_tokens=1)
    assert starved["pages"] == [] and starved["has_more"] is True
    assert len(remote.ok("delta", session_id="s3")["pages"]) == 2


def test_lanes_are_separate_and_local_is_unreachable(runtime, local, remote):
    local.ok("delta", session_id="shared")
    remote.ok("delta", session_id="shared")
    page(local, "people/x", "X")
    assert [p["slug"] for p in remote.ok("delta", session_id="shared")["pages"]] == ["people/x"]
    # the remote lane's read did not advance the local lane
    assert [p["slug"] for p in local.ok("delta", session_id="shared")["pages"]] == ["people/x"]
    from memverbs.server.context import Caller

    token_named_local = Client(runtime.mcp_dispatcher("full", Caller.mcp("default", client_id="local")))
    assert token_named_local.dispatcher.caller.client_id != "local"


def test_private_pages_hidden_from_remote(local, remote):
    page(local, "people/secret", "Secret", visibility="private")
    assert remote.ok("delta", since=EPOCH)["pages"] == []
    assert [p["slug"] for p in local.ok("delta", since=EPOCH, include_private=True)["pages"]] == ["people/secret"]
    assert local.ok("delta", since=EPOCH)["pages"] == []  # world-only unless include_private


def test_facts_overflow_sets_has_more(local, remote):
    for n in range(51):
        local.ok("remember", fact=f"fact {n}", provenance="p")
    body = remote.ok("delta", since=EPOCH)
    # At most 50, oldest first, cut at a whole millisecond so the cursor can resume exactly.
    assert 0 < len(body["facts"]) <= 50 and body["has_more"] is True
    assert body["facts"][0]["fact"] == "fact 0"


def test_threads_for_entities_after_since(local, remote):
    page(local, "people/alice", "Alice")
    since = iso(now_ms() - 1000)
    local.ok("remember", fact="Alice will call", provenance="p", entity="people/alice", kind="commitment")
    body = remote.ok("delta", since=since, entities="people/alice")
    assert body["threads"] == [{"kind": "commitment", "text": "Alice will call", "date": body["threads"][0]["date"]}]
    assert parse_instant(body["threads"][0]["date"]) > parse_instant(since)
    assert "## Thread updates since" in body["text"]


def test_idle_cursors_are_collected_after_seven_days(runtime, remote):
    brain = runtime.brain()
    eight_days_ago = now_ms() - 8 * 86_400_000
    brain.save_cursor("default", "remote", "stale", eight_days_ago, "", eight_days_ago)
    brain.save_cursor("default", "remote", "fresh", now_ms(), "", now_ms())
    remote.ok("delta", session_id="new-session")  # a first wake runs the GC
    assert brain.cursor("default", "remote", "stale") is None
    assert brain.cursor("default", "remote", "fresh") is not None


def test_the_redelivery_window_is_stated_and_true(local, remote):
    """A session wake says from when a change may come again (the cursor trails a page-less wake by
    the in-flight lag); a fact delivered inside that window does come again, one before it never."""
    remote.ok("delta", session_id="s-redeliver")
    local.ok("remember", fact="inside the window", provenance="p", entity="people/alice")
    first = remote.ok("delta", session_id="s-redeliver")
    assert [f["fact"] for f in first["facts"]] == ["inside the window"]
    window = first["redelivery"]
    assert window["window_ms"] == 2000 and window["dedupe_by"]["facts"] == ["fact", "entity_slug", "valid_from"]
    inside = parse_instant(first["facts"][0]["valid_from"]) > parse_instant(window["after"])
    again = remote.ok("delta", session_id="s-redeliver")
    # Recorded after `after` (the usual case, unless this machine took 2 s between the calls): it comes again.
    assert [f["fact"] for f in again["facts"]] == (["inside the window"] if inside else [])
    stateless = remote.ok("delta", since=EPOCH)
    assert stateless["redelivery"]["after"] == stateless["next_cursor"]["since"]
