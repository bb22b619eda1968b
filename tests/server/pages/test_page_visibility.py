"""Privacy never widens silently: only `visibility: world` makes a private page world-visible,
and a page's markdown comes back exactly as it was written (`get-page --raw`)."""

import json

import yaml
from helpers import page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.pages.markdown import stored_markdown


def raw(runtime, slug: str) -> str:
    row = runtime.brain().page(runtime.source, slug)
    return stored_markdown(json.loads(row["frontmatter"]), row["body"], row["markdown"])


def test_a_private_page_rewritten_without_visibility_stays_private(local, remote):
    page(local, "people/p", "P", visibility="private", body="secret")
    for content in ("# P\nnew body\n", "---\ntitle: P\n---\nnew body\n", "---\ntype: person\n---\n"):
        assert local.ok("put_page", slug="people/p", content=content)["visibility"] == "private"
        assert remote.err("get_page", slug="people/p")["error"] == "not_found"
    assert local.ok("get_page", slug="people/p")["frontmatter"]["visibility"] == "private"


def test_a_deleted_private_page_revived_without_visibility_stays_private(local, remote):
    page(local, "people/p", "P", visibility="private")
    local.ok("delete_page", slug="people/p")
    assert local.ok("put_page", slug="people/p", content="# P\n")["visibility"] == "private"
    assert remote.err("get_page", slug="people/p")["error"] == "not_found"


def test_only_an_explicit_world_widens(local, remote):
    page(local, "people/p", "P", visibility="private")
    assert local.ok("put_page", slug="people/p", content="---\nvisibility: world\n---\n# P\n")["visibility"] == "world"
    assert remote.ok("get_page", slug="people/p")["visibility"] == "world"


def test_a_visibility_typo_is_refused_not_read_as_world(local):
    for value in ("Private ", "PRIVATE"):
        assert local.ok("put_page", slug="people/a", content=f"---\nvisibility: {value}\n---\n")["visibility"] == "private"
    for value in ("privat", "public", "true", "[private]"):
        err = local.err("put_page", slug="people/b", content=f"---\nvisibility: {value}\n---\n")
        assert err["error"] == "invalid_params" and "world or private" in err["message"]
    assert local.err("get_page", slug="people/b")["error"] == "not_found"


def test_inherited_privacy_is_written_into_the_stored_source(local, runtime):
    page(local, "people/p", "P", visibility="private")
    local.ok("put_page", slug="people/p", content="---\ntitle: P\n---\nbody\n")
    assert raw(runtime, "people/p") == "---\nvisibility: private\ntitle: P\n---\nbody\n"
    local.ok("put_page", slug="people/p", content="no frontmatter\r\n")
    assert raw(runtime, "people/p") == "---\r\nvisibility: private\r\n---\r\nno frontmatter\r\n"


def test_pages_written_before_the_source_was_kept_are_rebuilt(local, runtime):
    page(local, "people/old", "Old", type="person", body="Body.")
    with runtime.brain().write() as db:
        db.execute("UPDATE pages SET markdown = NULL")
    rebuilt = raw(runtime, "people/old")
    assert rebuilt.startswith("---\ntitle: Old\ntype: person\n---\n") and rebuilt.endswith("Body.\n")
    local.ok("put_page", slug="people/old", content=rebuilt)
    got = local.ok("get_page", slug="people/old")
    assert (got["title"], got["type"]) == ("Old", "person")


_body_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_frontmatter = st.fixed_dictionaries(
    {},
    optional={
        "title": st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30),
        "type": st.sampled_from(["person", "company", "note"]),
        "aliases": st.lists(st.text("abcdefgh @-", min_size=1, max_size=8), max_size=3),
        "visibility": st.sampled_from(["world", "private"]),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fm=_frontmatter, body=_body_text, newline=st.sampled_from(["\n", "\r\n"]))
def test_raw_source_round_trips_byte_for_byte(local, runtime, fm, body, newline):
    if body.startswith("---"):
        body = "x" + body  # a body that opens like frontmatter is a frontmatter test of its own
    content = body
    if fm:
        dumped = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False).replace("\n", newline)
        content = f"---{newline}{dumped}---{newline}{body}"
    answer, is_error = local("put_page", slug="notes/round-trip", content=content)
    if is_error:
        return  # not a page (bad YAML in a body that looked like frontmatter); nothing was written
    first = raw(runtime, "notes/round-trip")
    if answer["visibility"] == "world" or "visibility" in fm:
        assert first == content
    # get-page --raw → put-page → get-page --raw gives the same bytes, and the same page.
    before = local.ok("get_page", slug="notes/round-trip")
    local.ok("put_page", slug="notes/round-trip", content=first)
    assert raw(runtime, "notes/round-trip") == first
    after = local.ok("get_page", slug="notes/round-trip")
    for key in ("title", "type", "visibility", "aliases", "body", "frontmatter", "timeline"):
        assert after[key] == before[key], key


@given(prefix=st.lists(st.sampled_from(["\n", "\r\n", "  \n", "\t\r\n"]), max_size=3).map("".join),
       bom=st.booleans(), newline=st.sampled_from(["\n", "\r\n"]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_blank_line_or_bom_before_the_frontmatter_changes_nothing_it_says(local, remote, runtime, prefix, bom, newline):
    """Read as body, the block would lose its `visibility: private` and publish the page."""
    head = ("\ufeff" if bom else "") + prefix
    content = newline.join(["---", "title: Meant private", "visibility: private", "aliases: [hush]", "---", "# Hidden", "PREFIXSECRET", ""])
    written = local.ok("put_page", slug="notes/meant-private", content=head + content)
    assert written["visibility"] == "private"
    page_seen = local.ok("get_page", slug="notes/meant-private")
    assert page_seen["title"] == "Meant private" and page_seen["frontmatter"]["aliases"] == ["hush"]
    assert remote.err("get_page", slug="notes/meant-private")["error"] == "not_found"
    assert "PREFIXSECRET" not in json.dumps(remote.ok("search", query="PREFIXSECRET"))
    assert raw(runtime, "notes/meant-private") == head + content  # the bytes as written, prefix and all


def test_the_same_prefix_holds_on_import_and_in_the_files_memverbs_writes(tmp_path, local, remote, runtime):
    from memverbs.cli.main import main
    from memverbs.server.sync.conflicts import _split
    from memverbs.server.sync.render import with_additions

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "diary.md").write_bytes("\ufeff\n\n---\nvisibility: private\n---\n# Diary\nDIARYSECRET\n".encode())
    assert main(["import", str(vault)]) == 0
    assert local.ok("get_page", slug="diary")["visibility"] == "private"
    assert remote.err("get_page", slug="diary")["error"] == "not_found"
    # write-back adds to the frontmatter that is there, never a second block above the blank line
    added = with_additions("\n---\ntitle: T\n---\nbody\n", aliases=["x"], links=[], timeline=[], private=False)
    assert added == "\n---\ntitle: T\naliases: [x]\n---\nbody\n"
    assert _split("\n---\na: 1\n---\nbody\n") == ("\n---\na: 1\n---\n", "body\n")
