"""Untrusted (MCP) callers never change a private page, nor learn from a write's answer that one exists.

Every write op of the full surface is tried against a private page, a deleted page, a world page
with private facts-fence rows, and a slug that never existed; the owner's page must be byte-for-byte
what it was, and the answers for a private and a deleted page must be the same.
"""

import json
import re

import pytest
from helpers import Client, page, sql_for

from memverbs.server.protocol.registry import OPERATIONS

PRIVATE = "people/secret"
DELETED = "people/gone"
FENCED = "people/alice"
FREE = "people/never"
SENTINEL = "OWNER-SENTINEL-3318"
FENCE_ROW = "- [private] FENCE-ROW-SENTINEL-9902\n  continued privately\n"


@pytest.fixture
def brain(local):
    page(local, PRIVATE, "Secret Person", visibility="private", type="person", aliases=["Shh"], body=f"{SENTINEL} body.")
    local.ok("add_alias", slug=PRIVATE, alias="Manual Secret Alias")
    local.ok("add_timeline_entry", slug=PRIVATE, date="2026-01-02", summary=f"{SENTINEL} met")
    page(local, DELETED, "Gone Person", visibility="private", body=f"{SENTINEL} was here.")
    local.ok("add_alias", slug=DELETED, alias="Ghost")
    local.ok("delete_page", slug=DELETED)
    page(local, FENCED, "Alice", body=f"Alice is public.\n\n<!-- facts -->\n{FENCE_ROW}- public row\n<!-- /facts -->\n")
    return local


def snapshot(runtime, slug: str) -> dict:
    """Everything the brain holds about a page (its row, aliases, links both ways, timeline)."""
    brain = runtime.brain()
    rows = lambda sql: [tuple(r) for r in brain.query(sql_for(brain, sql), (slug,))]  # noqa: E731
    return {
        "page": rows("SELECT * FROM pages WHERE slug = ?"),
        "aliases": rows("SELECT alias, alias_norm, origin FROM aliases WHERE slug = ? ORDER BY id"),
        "links_out": rows("SELECT to_slug, link_type, link_source FROM links WHERE from_slug = ? ORDER BY id"),
        "timeline": rows("SELECT date, summary, origin FROM timeline WHERE slug = ? ORDER BY id"),
    }


def writes_on(slug: str) -> list[tuple[str, dict]]:
    """One call of every write op of the full surface aimed at `slug` (add_link from it)."""
    return [
        ("put_page", {"slug": slug, "content": "---\ntitle: Hijacked\nvisibility: world\n---\nHIJACK\n"}),
        ("put_page", {"slug": slug, "content": "no frontmatter at all\n"}),
        ("delete_page", {"slug": slug}),
        ("add_alias", {"slug": slug, "alias": "Hijack Alias"}),
        ("add_link", {"from": slug, "to": "people/bob", "link_type": "works_with"}),
        ("add_timeline_entry", {"slug": slug, "date": "2026-02-03", "summary": "HIJACK event"}),
    ]


def test_every_write_op_of_the_full_surface_is_covered():
    page_writes = {op.name for op in OPERATIONS if op.mutating and op.handler.startswith("memverbs.server.verbs.page_ops:")}
    assert page_writes == {name for name, _ in writes_on("x")}


@pytest.mark.parametrize("slug", [PRIVATE, DELETED])
def test_untrusted_writes_never_change_a_hidden_page(brain, remote, runtime, slug):
    before = snapshot(runtime, slug)
    for tool, params in writes_on(slug):
        body, is_error = remote(tool, **params)
        assert is_error, (tool, body)
        assert body["error"] in ("not_found", "scope_denied"), body
        assert SENTINEL not in json.dumps(body)
    assert snapshot(runtime, slug) == before


def test_a_private_page_and_a_deleted_one_get_the_same_answers(brain, remote):
    for (tool, a), (_, b) in zip(writes_on(PRIVATE), writes_on(DELETED), strict=True):
        got_private, got_deleted = remote(tool, **a)[0], remote(tool, **b)[0]
        assert json.dumps(got_private).replace(PRIVATE, "S") == json.dumps(got_deleted).replace(DELETED, "S"), tool


def test_the_other_writes_answer_a_private_page_as_a_missing_one(brain, remote):
    for (tool, hidden), (_, free) in zip(writes_on(PRIVATE), writes_on(FREE), strict=True):
        if tool == "put_page":
            continue  # a free slug is created; see the next test
        got_hidden, got_free = remote(tool, **hidden)[0], remote(tool, **free)[0]
        assert json.dumps(got_hidden).replace(PRIVATE, "S") == json.dumps(got_free).replace(FREE, "S"), tool


def reads_on(slug: str, n: int) -> list[tuple[str, dict]]:
    """One call of every other tool of the full surface naming `slug` (`n` keeps remember's facts apart)."""
    return [
        ("get_page", {"slug": slug}),
        ("entity", {"name": slug}),
        ("recall", {"entity": slug}),
        ("recall", {"query": slug}),
        ("context_pack", {"entities": slug, "include_private": True}),
        ("delta", {"since": "1970-01-01T00:00:00Z", "entities": slug, "include_private": True}),
        ("search", {"query": slug}),
        ("list_pages", {"prefix": slug}),
        ("synthesize", {"question": f"What do we know about {slug}?"}),
        ("whoami", {}),
        ("remember", {"fact": f"Met them at the fair {n}", "entity": slug, "provenance": "p"}),
    ]


def _same_shape(body: dict, slug: str) -> str:
    """The answer with the slug asked about, and what differs between any two calls (ids, times), blanked."""
    volatile = {"id", "latency_ms", "updated_at", "created_at", "valid_from", "since", "after", "window_ms"}

    def blank(value):
        if isinstance(value, dict):
            return {k: ("*" if k in volatile else blank(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [blank(v) for v in value]
        return value

    return re.sub(r"#\d+", "#N", json.dumps(blank(body)).replace(slug, "S"))


def test_every_tool_answers_a_hidden_slug_as_a_missing_one(brain, remote):
    """Byte for byte, ids and clocks aside: no tool tells a private (or deleted) slug from one that never existed."""
    for n, hidden in enumerate((PRIVATE, DELETED)):
        free = f"{FREE}-{n}"
        for (tool, a), (_, b) in zip(reads_on(hidden, n), reads_on(free, n), strict=True):
            got_hidden, got_free = remote(tool, **a), remote(tool, **b)
            assert got_hidden[1] == got_free[1], (tool, got_hidden, got_free)
            assert _same_shape(got_hidden[0], hidden) == _same_shape(got_free[0], free), tool
            assert SENTINEL not in json.dumps(got_hidden[0]) and "Shh" not in json.dumps(got_hidden[0])


def test_the_hidden_slug_tests_cover_every_tool():
    covered = {name for name, _ in writes_on("x") + reads_on("x", 0)} | {"forget"}  # forget: by id, below
    assert covered == {op.name for op in OPERATIONS}


def test_put_page_over_a_hidden_page_is_refused_with_a_fix(brain, remote):
    err = remote.err("put_page", slug=PRIVATE, content="# Mine now\n")
    assert err["error"] == "scope_denied"
    assert "private or deleted" in err["message"] and "memverbs put-page" in err["suggestion"]
    assert remote.ok("put_page", slug=FREE, content="# Fresh\n")["status"] == "created"


def test_the_owner_still_writes_private_and_deleted_pages(brain, local):
    assert local.ok("add_timeline_entry", slug=PRIVATE, date="2026-03-01", summary="owner")["slug"] == PRIVATE
    assert local.ok("put_page", slug=DELETED, content="# Back\n")["status"] == "created"


def test_operator_opt_in_to_read_private_pages_does_not_open_writes(brain, runtime, monkeypatch):
    monkeypatch.setenv("MEMVERBS_REMOTE_PRIVATE_PAGES", "1")
    reader = Client(runtime.mcp_dispatcher("full"))
    assert reader.ok("get_page", slug=PRIVATE)["visibility"] == "private"  # the opt-in is on
    before = snapshot(runtime, PRIVATE)
    for tool, params in writes_on(PRIVATE):
        assert reader(tool, **params)[1], tool
    assert snapshot(runtime, PRIVATE) == before


def test_linking_to_a_private_page_is_stored_on_the_world_page_and_reveals_nothing(brain, remote, local, runtime):
    # A link belongs to the page it starts from: the private page itself is untouched, and the answer
    # is the one a slug that never existed gets.
    page(local, "people/bob", "Bob")
    before = snapshot(runtime, PRIVATE)
    to_private = remote.ok("add_link", **{"from": "people/bob", "to": PRIVATE, "link_type": "knows"})
    to_free = remote.ok("add_link", **{"from": "people/bob", "to": FREE, "link_type": "knows"})
    assert to_private["added"] is to_free["added"] is True
    assert snapshot(runtime, PRIVATE) == before
    card = remote.ok("entity", name="people/bob")["card"]
    assert PRIVATE not in json.dumps(card["edges"])


def test_untrusted_write_back_keeps_the_private_fence_rows_it_never_saw(brain, remote, local):
    seen = remote.ok("get_page", slug=FENCED)
    assert "FENCE-ROW-SENTINEL" not in seen["body"]
    answer = remote.ok("put_page", slug=FENCED, content="---\ntitle: Alice\n---\n" + seen["body"] + "\nAn edit.\n")
    assert answer["status"] == "updated" and "FENCE-ROW-SENTINEL" not in json.dumps(answer)
    owner = local.ok("get_page", slug=FENCED)["body"]
    assert FENCE_ROW in owner and "An edit." in owner
    assert "FENCE-ROW-SENTINEL" not in remote.ok("get_page", slug=FENCED)["body"]
    # ...even when the writer drops the fence altogether: the rows come back in a fence of their own.
    remote.ok("put_page", slug=FENCED, content="# Alice\nRewritten.\n")
    owner = local.ok("get_page", slug=FENCED)["body"]
    assert FENCE_ROW in owner and "Rewritten." in owner
    assert "FENCE-ROW-SENTINEL" not in json.dumps(remote.ok("get_page", slug=FENCED))
    # A trusted writer owns the page and may remove them.
    local.ok("put_page", slug=FENCED, content="# Alice\nNo more rows.\n")
    assert "FENCE-ROW-SENTINEL" not in local.ok("get_page", slug=FENCED)["body"]


def test_untrusted_forget_of_a_private_fact_looks_like_a_missing_id(brain, remote, local):
    fact_id = local.ok("remember", fact=f"{SENTINEL} private fact", provenance="p", visibility="private")["id"]
    private = remote.err("forget", id=fact_id)
    missing = remote.err("forget", id="987654321")
    assert private["error"] == missing["error"] == "not_found"
    assert private["suggestion"] == missing["suggestion"] and SENTINEL not in json.dumps(private)
    assert any(f["fact_id"] == fact_id for f in local.ok("recall")["facts"])  # still active


# -- property: any sequence of untrusted writes, any arguments ----------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_slug = st.sampled_from([PRIVATE, DELETED, FENCED, FREE, "people/bob"])
_write = st.one_of(
    st.builds(lambda s, c, v: ("put_page", {"slug": s, "content": f"---\nvisibility: {v}\n---\n{c}"}), _slug, _text, st.sampled_from(["world", "private"])),
    st.builds(lambda s, c: ("put_page", {"slug": s, "content": c}), _slug, _text),
    st.builds(lambda s: ("delete_page", {"slug": s}), _slug),
    st.builds(lambda s, a: ("add_alias", {"slug": s, "alias": a or "x"}), _slug, _text),
    st.builds(lambda f, t: ("add_link", {"from": f, "to": t, "link_type": "rel"}), _slug, _slug),
    st.builds(lambda s, t: ("add_timeline_entry", {"slug": s, "date": "2026-04-05", "summary": t or "x"}), _slug, _text),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(_write, min_size=1, max_size=8))
def test_no_sequence_of_untrusted_writes_changes_a_hidden_page_or_leaks_it(brain, remote, local, runtime, calls):
    before = {slug: snapshot(runtime, slug) for slug in (PRIVATE, DELETED)}
    for tool, params in calls:
        body, is_error = remote(tool, **params)
        text = json.dumps(body)
        assert SENTINEL not in text and "FENCE-ROW-SENTINEL" not in text and "Shh" not in text
        if is_error:
            assert body["error"] in ("invalid_params", "not_found", "scope_denied"), body
    for slug in (PRIVATE, DELETED):
        after = snapshot(runtime, slug)
        # Links *to* a hidden page live on the page they start from; the hidden page's own row,
        # aliases, out-links and timeline never change.
        assert after == before[slug], slug
    if local("get_page", slug=FENCED)[1] is False:  # still there (an untrusted delete may remove a world page)
        assert FENCE_ROW in local.ok("get_page", slug=FENCED)["body"]


_line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=20)
_piece = st.one_of(_line, st.sampled_from(["<!-- facts -->", "<!-- /facts -->", "<!-- takes -->", "<!-- /takes -->", "- [private] p", "  more", "- public", ""]))


@settings(max_examples=200, deadline=None)
@given(new=st.lists(_piece, max_size=12), rows=st.lists(_line, min_size=1, max_size=3))
def test_kept_rows_are_always_still_private_and_the_writers_text_is_intact(new, rows):
    from memverbs.server.pages.markdown import keep_private_rows, without_private_rows

    old_body = "<!-- facts -->\n" + "".join(f"- [private] KEEP-{n} {r}\n" for n, r in enumerate(rows)) + "<!-- /facts -->\n"
    new_body = "\n".join(new)
    merged = keep_private_rows(old_body, new_body)
    # Every kept row is a private row of the merged page (an untrusted reader never sees it)...
    assert all(f"KEEP-{n} " not in without_private_rows(merged) for n in range(len(rows)))
    assert all(f"- [private] KEEP-{n} {r}" in merged for n, r in enumerate(rows))
    # ...and what the writer sent is all still there, in order.
    it = iter(merged.splitlines())
    assert all(any(line == m for m in it) for line in new_body.splitlines())
