"""A world page's private facts-fence rows are sealed on every untrusted read, not only in its body.

The rows (`- [private] …` inside `<!-- facts -->`, with their indented continuation lines) may
hold `[[links]]` and dated timeline lines. Those links and dates are the private view's: no
untrusted caller sees them through get_page, cards (edges, open threads, backlinks of the linked
page), context_pack, search or recall, with or without `search.remote_private_pages`. Trusted
callers see everything. Each test here failed before the page was parsed into its two views.
"""

from __future__ import annotations

import json

import pytest
from helpers import Client, page

HIDDEN_TARGET = "people/ghostlink"
ROW_EVENT = "ROW-EVENT-SENTINEL"
ROW_TEXT = "ROW-TEXT-SENTINEL"

FENCED = (
    "Alice is public and works in zebra logistics.\n\n"
    "## Timeline\n"
    "- 2026-01-05: Joined the zebra team.\n"
    "<!-- facts -->\n"
    f"- [private] {ROW_TEXT} met [[{HIDDEN_TARGET}]] secretly\n"
    f"  - 2099-01-01: {ROW_EVENT} in a continuation line\n"
    "- public row about [[people/bob]]\n"
    "<!-- /facts -->\n"
)


@pytest.fixture
def fenced(local):
    page(local, HIDDEN_TARGET, "Ghost Link")
    page(local, "people/bob", "Bob")
    page(local, "people/alice", "Alice", body=FENCED)
    return local


@pytest.fixture
def opened(runtime, monkeypatch) -> Client:
    """An untrusted caller the operator lets read private pages (search.remote_private_pages)."""
    monkeypatch.setenv("MEMVERBS_REMOTE_PRIVATE_PAGES", "1")
    return Client(runtime.mcp_dispatcher("full"))


def _sealed(body: object) -> bool:
    text = json.dumps(body)
    return HIDDEN_TARGET not in text and ROW_EVENT not in text and ROW_TEXT not in text


def test_get_page_links_and_timeline_serve_the_world_view(fenced, remote, opened):
    for reader in (remote, opened):
        got = reader.ok("get_page", slug="people/alice")
        assert _sealed(got), got
        assert [link["to"] for link in got["links"]] == ["people/bob"]
        assert [row["date"] for row in got["timeline"]] == ["2026-01-05"]
    owner = fenced.ok("get_page", slug="people/alice")
    assert {link["to"] for link in owner["links"]} == {HIDDEN_TARGET, "people/bob"}
    assert {row["date"] for row in owner["timeline"]} == {"2026-01-05", "2099-01-01"}


def test_cards_threads_and_backlinks_serve_the_world_view(fenced, remote, opened):
    for reader in (remote, opened):
        card = reader.ok("entity", name="people/alice")["card"]
        assert _sealed(card), card
        target = reader.ok("entity", name=HIDDEN_TARGET)["card"]
        assert target["backlink_count"] == 0 and target["edges"] == [], target
    owner = fenced.ok("entity", name="people/alice")["card"]
    assert HIDDEN_TARGET in json.dumps(owner["edges"]) and ROW_EVENT in json.dumps(owner["open_threads"])
    assert fenced.ok("entity", name=HIDDEN_TARGET)["card"]["backlink_count"] == 1


def test_context_pack_and_delta_serve_the_world_view(fenced, remote, opened):
    for reader in (remote, opened):
        pack = reader.ok("context_pack", entities="people/alice", include_private=True)
        assert _sealed(pack), pack
        target = reader.ok("context_pack", entities=HIDDEN_TARGET)["cards"][0]
        assert target["backlink_count"] == 0 and target["edges"] == [], target
        delta = reader.ok("delta", since="1970-01-01T00:00:00Z", entities="people/alice", include_private=True)
        assert _sealed(delta["threads"]), delta  # its pages list the world page people/ghostlink itself
    # The owner's pack widens with include_private, as it does for private facts.
    owner = fenced.ok("context_pack", entities="people/alice", include_private=True)
    assert ROW_EVENT in owner["text"]


def test_search_and_recall_never_quote_private_rows_even_with_private_pages_opened(fenced, remote, opened):
    for reader in (remote, opened):
        for query in ("zebra", "zebra secretly", "alice zebra ghostlink", "ROW-TEXT-SENTINEL"):
            assert _sealed(reader.ok("search", query=query)), (reader, query)
            assert _sealed(reader.ok("recall", query=query)), (reader, query)


def test_a_link_the_owner_adds_to_a_private_page_never_shows_its_slug(local, remote):
    page(local, "people/bob", "Bob")
    page(local, "people/hush", "Hush", visibility="private")
    local.ok("add_link", **{"from": "people/bob", "to": "people/hush", "link_type": "knows"})
    assert "people/hush" not in json.dumps(remote.ok("get_page", slug="people/bob"))
    assert "people/hush" not in json.dumps(remote.ok("entity", name="people/bob"))
    assert [link["to"] for link in local.ok("get_page", slug="people/bob")["links"]] == ["people/hush"]


def test_the_all_terms_pass_does_not_match_private_text(local, remote):
    """Which pages an untrusted search finds, and in what order, must not depend on private rows' words."""
    page(local, "topics/bravo", "Alpha Alpha Alpha", body="Alpha everywhere.")
    page(local, "topics/alfa", "Field notes", body="One alpha.\n\n<!-- facts -->\n- [private] zulu\n<!-- /facts -->\n")
    with_word = [r["slug"] for r in remote.ok("search", query="alpha zulu", limit=1)["results"]]
    page(local, "topics/alfa", "Field notes", body="One alpha.\n\n<!-- facts -->\n- [private] yankee\n<!-- /facts -->\n")
    without_word = [r["slug"] for r in remote.ok("search", query="alpha zulu", limit=1)["results"]]
    assert with_word == without_word == ["topics/bravo"]
    assert [r["slug"] for r in local.ok("search", query="alpha yankee", limit=1)["results"]] == ["topics/alfa"]


def test_a_private_alias_neither_resolves_nor_blocks_an_untrusted_link(local, remote):
    page(local, "people/zed-world", "Zed World", aliases=["Zed"])
    page(local, "people/zed-private", "Zed Private", aliases=["Zed"], visibility="private")
    remote.ok("put_page", slug="notes/mine", content="# Mine\nSee [[Zed]].\n")
    # As if the private page did not exist: the one alias a world page holds names it.
    assert [link["to"] for link in remote.ok("get_page", slug="notes/mine")["links"]] == ["people/zed-world"]


def test_export_then_sync_keeps_the_private_rows(tmp_path, fenced, remote):
    from memverbs.cli.main import main

    folder = tmp_path / "out"
    assert main(["export", str(folder)]) == 0
    text = (folder / "people" / "alice.md").read_text()
    assert ROW_TEXT not in text and ROW_EVENT not in text
    assert main(["sync", str(folder)]) == 0
    owner = fenced.ok("get_page", slug="people/alice")
    assert ROW_TEXT in owner["body"] and ROW_EVENT in owner["body"]
    assert HIDDEN_TARGET in json.dumps(owner["links"])
    assert _sealed(remote.ok("get_page", slug="people/alice"))
    # The same file written again (an edit elsewhere in it) still keeps them.
    (folder / "people" / "alice.md").write_text(text.replace("works in zebra", "works in yak"))
    assert main(["sync", str(folder)]) == 0
    assert ROW_TEXT in fenced.ok("get_page", slug="people/alice")["body"]


def test_an_untrusted_recall_does_not_steer_resolution(local, remote):
    """last_retrieved_at breaks resolution ties for every caller, so only trusted reads may move it."""
    page(local, "alpha/twin", "Twin", body="aardvark")
    page(local, "beta/twin", "Twin", body="badger")
    before = local.ok("entity", name="Twin")["card"]["entity"]["slug"]
    assert before == "beta/twin"  # the most recently updated of the two
    assert [r["slug"] for r in remote.ok("recall", query="twin aardvark", limit=1)["results"]] == ["alpha/twin"]
    assert local.ok("entity", name="Twin")["card"]["entity"]["slug"] == before
    assert remote.ok("entity", name="Twin")["card"]["last_touched"]["last_retrieved_at"] is None
    # The owner's own recall still counts (PROTOCOL.md §5.1's side effect, for the trusted caller).
    local.ok("recall", query="twin aardvark", limit=1)
    assert local.ok("entity", name="Twin")["card"]["entity"]["slug"] == "alpha/twin"


VISIBILITY_TRICKS = [
    "---\nVisibility: private\n---\n# T\nTRICK-SENTINEL\n",
    "---\nVISIBILITY: Private\ntitle: T\n---\nTRICK-SENTINEL\n",
    "---\nvisibility: private\nvisibility: world\n---\nTRICK-SENTINEL\n",
    "---\nvisibility: world\nVisibility: private\n---\nTRICK-SENTINEL\n",
    "---\n'visibility': world\n\"visibility\": private\nvisibility: world\n---\nTRICK-SENTINEL\n",
    "---\r\nvisibility: private\r\nvisibility: world\r\n---\r\nTRICK-SENTINEL\r\n",
]


@pytest.mark.parametrize("content", VISIBILITY_TRICKS, ids=range(len(VISIBILITY_TRICKS)))
def test_visibility_in_any_case_or_repeated_resolves_private_through_mcp(local, remote, content):
    answer = remote.ok("put_page", slug="notes/trick", content=content)
    assert answer["visibility"] == "private"
    assert remote.err("get_page", slug="notes/trick")["error"] == "not_found"
    assert "TRICK-SENTINEL" not in json.dumps(remote.ok("search", query="TRICK-SENTINEL"))
    assert local.ok("get_page", slug="notes/trick")["visibility"] == "private"


@pytest.mark.parametrize("command", ["import", "sync"])
def test_visibility_in_any_case_or_repeated_resolves_private_on_import_and_sync(tmp_path, local, remote, command):
    from memverbs.cli.main import main

    folder = tmp_path / "notes"
    folder.mkdir()
    for i, content in enumerate(VISIBILITY_TRICKS):
        (folder / f"trick-{i}.md").write_bytes(content.encode())
    assert main([command, str(folder)]) == 0
    for i in range(len(VISIBILITY_TRICKS)):
        assert local.ok("get_page", slug=f"trick-{i}")["visibility"] == "private", i
        assert remote.err("get_page", slug=f"trick-{i}")["error"] == "not_found", i


def test_a_visibility_value_that_is_not_world_or_private_is_refused_even_when_repeated(local):
    err = local.err("put_page", slug="notes/typo", content="---\nvisibility: private\nVisibility: wrold\n---\nx\n")
    assert err["error"] == "invalid_params" and "world or private" in err["message"]
