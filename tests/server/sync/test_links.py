"""Links in a synced vault resolve as Obsidian resolves them (docs/sync.md, "Links")."""

from __future__ import annotations

from vaults import write


def links_of(local, slug: str) -> list[str]:
    return sorted(link["to"] for link in local.ok("get_page", slug=slug)["links"] if link["link_source"] == "markdown")


def test_an_obsidian_vault_links_by_file_name_path_suffix_alias_and_relative_path(tmp_path, cli_json, local):
    root = tmp_path / "v"
    # `a-index` sorts first: every link in it names a note imported later in the same pass.
    write(root / "a-index.md", (
        "See [[Command palette#Usage|the palette]], ![[Daily note]], [[CLAUDE_DESKTOP]],\n"
        "[[Core/Settings]] (two notes are called Settings), [[Settings#^block1]], [[Ops]] (an alias),\n"
        "[spec](protocol/FILE%20one.md), ![[diagram.png]] and [[Été]].\n\n"
        "```\n[[Not a link]]\n```\nInline `[[Nor this]]`.\n"
    ))
    write(root / "Plugins" / "Command palette.md", "Opens commands.\n")
    write(root / "Plugins" / "Core" / "Settings.md", "Deep settings.\n")
    write(root / "Core" / "Settings.md", "Shallow settings.\n")
    write(root / "journal" / "Daily note.md", "Daily.\n")
    write(root / "claude_desktop.md", "Desktop.\n")
    write(root / "team" / "operations.md", "---\naliases: [Ops]\n---\nThe ops team.\n")
    write(root / "protocol" / "FILE one.md", "Back to [the index](../a-index.md).\n")
    write(root / "notes" / "Été.md", "Summer.\n")
    _code, rep = cli_json("sync", root)
    assert rep["errors"] == 0, rep
    assert links_of(local, "a-index") == sorted([
        "plugins/command-palette", "journal/daily-note", "claude_desktop", "core/settings", "team/operations",
        "protocol/file-one", "notes/ete",
    ])
    assert links_of(local, "protocol/file-one") == ["a-index"]


def test_a_link_finds_a_note_created_later_in_the_brain(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "a.md", "Waiting for [[Command Palette]] and [[Nested/Thing]].\n")
    cli_json("sync", root)
    write(root / "tools" / "command palette.md", "Now here.\n")
    write(root / "deep" / "nested" / "thing.md", "Also here.\n")
    cli_json("sync", root)
    assert links_of(local, "a") == ["deep/nested/thing", "tools/command-palette"]


def test_greek_and_cyrillic_names_get_readable_slugs_that_links_find_in_any_case(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "places" / "Москва.md", "Capital.\n")
    write(root / "places" / "Ελλάδα.md", "Country.\n")
    write(root / "a.md", "[[" + "Москва".upper() + "]] and [[" + "Ελλάδα".upper() + "]].\n")  # in capitals
    cli_json("sync", root)
    assert links_of(local, "a") == ["places/ellada", "places/moskva"]
