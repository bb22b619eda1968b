"""Names survive a folder: readable slugs in every script, titles from file names, renames that keep a chosen title."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st
from vaults import write

from memverbs.cli.main import main
from memverbs.server.names import link_key, looks_like_slug, path_segment_slug, valid_slug
from memverbs.server.sync.slugs import path_for_slug, slug_for_path


def test_scripts_without_a_latin_spelling_keep_their_letters():
    assert slug_for_path("日本.md") == "日本"
    assert slug_for_path("地図/서울 지도.md", "notes") == "notes/地図/서울-지도"
    assert slug_for_path("हिन्दी.md") == "हिन्दी"
    assert slug_for_path("日本語ノート (draft).md") == "日本語ノート-draft"
    assert slug_for_path("Москва.md") == "moskva" and slug_for_path("été.md") == "ete"  # spelled in Latin, as before
    assert slug_for_path("🎉.md").startswith("x-")  # only when nothing readable is left
    for slug in ("日本", "notes/地図/서울-지도", "a/हिन्दी"):
        assert valid_slug(slug) and looks_like_slug(slug) and slug_for_path(path_for_slug(slug)) == slug
    for bad in ("日本-", "Ab", "δ", "notes//日本", " 日本", "日 本", "Ä"):
        assert not valid_slug(bad), bad


@given(st.text(min_size=1, max_size=12))
def test_every_file_slug_is_a_valid_slug_and_maps_to_itself(name):
    seg = path_segment_slug(name)
    assert valid_slug(seg), (name, seg)
    assert path_segment_slug(seg) == seg
    assert link_key(seg) == seg


def test_a_cjk_note_is_a_readable_page_on_every_path(tmp_path, cli_json, local, remote, capsys):
    write(tmp_path / "v" / "日本.md", "東京と大阪。\n")
    write(tmp_path / "v" / "旅行" / "計画.md", "See [[日本]] and [地図](../日本.md).\n")
    code, rep = cli_json("import", tmp_path / "v")
    assert code == 0, rep
    page = remote.ok("get_page", slug="日本")  # over MCP too
    assert page["title"] == "日本"  # the file's name, never x-44da6bbc
    plan = local.ok("get_page", slug="旅行/計画")
    assert [link["to"] for link in plan["links"]] == ["日本"]
    assert main(["backlinks", "日本"]) == 0 and "旅行/計画" in capsys.readouterr().out
    assert local.ok("remember", fact="Tokyo is the capital", provenance="test", entity="日本")["entity_slug"] == "日本"
    assert local.ok("entity", name="日本")["card"]["entity"]["slug"] == "日本"
    assert local.ok("remember", fact="Kyoto has temples", provenance="test", entity="京都 寺")["entity_slug"] == "京都-寺"
    local.ok("put_page", slug="メモ/新しい", content="# 新しい\n")  # an agent's page in the same script
    assert main(["get-page", "日本"]) == 0 and "東京と大阪" in capsys.readouterr().out  # the CLI
    assert main(["export", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert (tmp_path / "out" / "日本.md").read_text() == "東京と大阪。\n"
    assert (tmp_path / "out" / "メモ" / "新しい.md").read_text() == "# 新しい\n"


def test_put_page_refuses_a_slug_no_file_could_have(local):
    for bad in ("日本-", "Δ", "notes/ a"):
        err = local.err("put_page", slug=bad, content="x\n")
        assert err["error"] == "invalid_params" and "not a valid slug" in err["message"]


def test_a_note_without_a_title_is_named_by_its_file_and_write_back_leaves_it_out(tmp_path, cli_json, local):
    note = "---\ntags: [a]\n---\nSimple filter:\n\nsome text\n"
    write(tmp_path / "v" / "Guides" / "Search Tips.md", note)
    assert cli_json("sync", tmp_path / "v")[0] == 0
    page = local.ok("get_page", slug="guides/search-tips")
    assert page["title"] == "Search Tips"  # the file name: not the slug, not a body line
    local.ok("put_page", slug="guides/search-tips", content="---\ntags: [a]\n---\nSimple filter:\n\nmore text\n")  # an agent
    assert local.ok("get_page", slug="guides/search-tips")["title"] == "Search Tips"  # kept: the text still names none
    assert cli_json("sync", tmp_path / "v")[0] == 0
    text = (tmp_path / "v" / "Guides" / "Search Tips.md").read_text()
    assert text == "---\ntags: [a]\n---\nSimple filter:\n\nmore text\n"  # written back; no title put in
    assert local.ok("entity", name="Search Tips")["card"]["entity"]["slug"] == "guides/search-tips"


def test_a_rename_retitles_only_a_title_that_came_from_the_file_name(tmp_path, cli_json, local):
    v = tmp_path / "v"
    write(v / "Draft idea.md", "No title of its own.\n")
    write(v / "Chosen.md", "---\ntitle: My chosen title\n---\nText.\n")
    write(v / "Heading.md", "# A heading title\nText.\n")
    write(v / "Same.md", "---\ntitle: Same\n---\nIts title happens to be its name.\n")
    assert cli_json("sync", v)[0] == 0
    for old, new in (("Draft idea", "Final idea"), ("Chosen", "Renamed"), ("Heading", "Other"), ("Same", "Changed")):
        (v / "sub").mkdir(exist_ok=True)
        os.rename(v / f"{old}.md", v / "sub" / f"{new}.md")
    code, rep = cli_json("sync", v)
    assert code == 0 and rep["renamed"] == 4, rep
    titles = {slug: local.ok("get_page", slug=slug)["title"] for slug in
              ("sub/final-idea", "sub/renamed", "sub/other", "sub/changed")}
    assert titles == {"sub/final-idea": "Final idea", "sub/renamed": "My chosen title", "sub/other": "A heading title",
                      "sub/changed": "Same"}


def test_a_page_named_by_the_old_rule_moves_to_its_readable_slug_and_title(tmp_path, cli_json, local, runtime):
    """A brain from before: `日本.md` was `x-44da6bbc`, titled `x-44da6bbc`. The next pass moves it, facts and all."""
    from memverbs.server.sync.state import FileState, SyncState
    from memverbs.server.timeparse import now_ms

    v = tmp_path / "v"
    write(v / "日本.md", "Text.\n")
    assert cli_json("sync", v)[0] == 0
    brain, source = runtime.brain(), runtime.source
    brain.rename_page(source, "日本", "x-44da6bbc", now_ms(), title=("日本", "x-44da6bbc"))  # as the old rule left it
    state = SyncState(brain, source)
    folder = state.folders()[0]
    old = state.file(folder, "日本.md")
    state.record(folder, FileState("日本.md", "x-44da6bbc", old.file_hash, old.size, old.mtime_ns, old.page_updated_at, now_ms()))
    local.ok("remember", fact="Old fact", provenance="test", entity="x-44da6bbc")
    assert local.ok("get_page", slug="x-44da6bbc")["title"] == "x-44da6bbc"
    assert cli_json("sync", v)[0] == 0
    assert local.ok("get_page", slug="日本")["title"] == "日本"
    assert [f["fact"] for f in local.ok("recall", entity="日本")["facts"]] == ["Old fact"]


def test_move_facts_files_them_under_a_name_in_another_script(local, capsys):
    local.ok("remember", fact="A temple visit", provenance="test", entity="trip")
    assert main(["move-facts", "trip", "京都 寺", "--reason", "its own entity"]) == 0
    capsys.readouterr()
    assert [f["fact"] for f in local.ok("recall", entity="京都-寺")["facts"]] == ["A temple visit"]
