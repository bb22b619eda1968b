"""Write-back touches only what memverbs owns: the user's note comes back as they wrote it."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from markdown_notes import date as _date
from markdown_notes import notes
from markdown_notes import word as _word
from vaults import write

NOTE = (
    "---\n"
    "# my own comment\n"
    "created: 2024-03-01\n"
    "tags:\n"
    "  - project\n"
    "  - 'quoted'\n"
    "aliases: [Ops]\n"
    "---\n"
    "Simple filter:\n"
    "Some prose.\n\n"
    "## Timeline\n"
    "- 2024-03-01: Started\n\n"
    "## Later\n"
    "More.\n"
)


def test_write_back_adds_only_what_the_brain_added_and_never_a_second_timeline(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "ops.md", NOTE)
    cli_json("sync", root)
    local.ok("add_alias", slug="ops", alias="Operations")
    local.ok("add_timeline_entry", slug="ops", date="2024-04-02", summary="Shipped")
    _code, rep = cli_json("sync", root)
    assert rep["written_back"] == 1, rep
    first = (root / "ops.md").read_bytes()
    assert first.decode() == NOTE.replace("aliases: [Ops]", "aliases: [Ops, Operations]").replace(
        "- 2024-03-01: Started\n", "- 2024-03-01: Started\n- 2024-04-02: Shipped\n")
    for _ in range(3):  # a later edit elsewhere in the brain makes the page due again
        local.ok("add_alias", slug="ops", alias="Operations")
        cli_json("sync", root)
        assert (root / "ops.md").read_bytes() == first
    # The user edits elsewhere; the import now reads the written row, and it is listed once, not twice.
    (root / "ops.md").write_bytes(first.replace(b"Some prose.", b"Some more prose."))
    cli_json("sync", root)
    timeline = local.ok("get_page", slug="ops")["timeline"]
    assert [(t["date"], t["summary"]) for t in timeline] == [("2024-04-02", "Shipped"), ("2024-03-01", "Started")]
    local.ok("add_alias", slug="ops", alias="Operations")
    cli_json("sync", root)
    assert (root / "ops.md").read_bytes() == first.replace(b"Some prose.", b"Some more prose.")


def test_a_note_without_a_title_gets_none_and_keeps_its_line_endings_and_bom(tmp_path, cli_json, local):
    root = tmp_path / "v"
    raw = "\ufeff---\r\ntags: [a]\r\n---\r\nNothing to name it by.\r\n".encode()
    (root).mkdir()
    (root / "plain.md").write_bytes(raw)
    cli_json("sync", root)
    local.ok("add_timeline_entry", slug="plain", date="2025-01-02", summary="Filed")
    cli_json("sync", root)
    got = (root / "plain.md").read_bytes()
    assert got == raw + b"\r\n## Timeline\r\n- 2025-01-02: Filed\r\n"
    assert b"title:" not in got


def test_a_save_between_render_and_replace_is_a_conflict_not_overwritten(tmp_path, cli_json, local, monkeypatch):
    from memverbs.server.sync import writeback

    root = tmp_path / "v"
    write(root / "a.md", "# A\nOne.\n")
    cli_json("sync", root)
    local.ok("add_timeline_entry", slug="a", date="2025-01-02", summary="Filed")
    real = writeback.render_page

    def render_then_user_saves(*args, **kwargs):
        out = real(*args, **kwargs)
        (root / "a.md").write_text("# A\nThe user's save.\n")
        return out

    monkeypatch.setattr(writeback, "render_page", render_then_user_saves)
    _code, rep = cli_json("sync", root)
    assert (root / "a.md").read_text() == "# A\nThe user's save.\n"
    assert rep["written_back"] == 0 and len(rep["conflicts"]) == 1, rep


# -- the rendering as a property: random notes × random brain additions × repeated passes ---------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    note=notes(),
    aliases=st.lists(_word, max_size=3),
    links=st.lists(st.tuples(st.sampled_from(["related", "works_at"]), st.sampled_from(["b", "c/d"])), max_size=2),
    timeline=st.lists(st.tuples(_date, _word), max_size=3),
    private=st.booleans(),
)
def test_additions_are_surgical_and_a_fixed_point(note, aliases, links, timeline, private):
    from memverbs.server.pages.markdown import PageFormatError, parse_page
    from memverbs.server.sync.render import with_additions

    try:
        before = parse_page(note)
    except PageFormatError:
        assume(False)
        return
    once = with_additions(note, aliases=aliases, links=links, timeline=timeline, private=private)
    # Every pass after the first changes nothing: what the note now declares is never added again.
    assert with_additions(once, aliases=aliases, links=links, timeline=timeline, private=private) == once
    after = parse_page(once)
    # Nothing the user wrote is lost or reformatted: each of their lines is still there, in order.
    mine = [line for line in note.splitlines() if not line.startswith(("aliases:", "links:", "  related:"))]
    theirs = iter(once.splitlines())
    assert all(any(line == other for other in theirs) for line in mine)
    assert (after.title is None) == (before.title is None)
    for key in set(before.frontmatter) - {"aliases", "links", "visibility"}:
        assert after.frontmatter[key] == before.frontmatter[key]
    from memverbs.server.names import collapse, normalize_alias

    assert {normalize_alias(a) for a in aliases} <= {normalize_alias(a) for a in after.aliases}
    assert {(d, collapse(s)) for d, s in timeline} <= {(d, collapse(s)) for d, s, _ in after.timeline}
    if "\r\n" in note:
        assert "\n" not in once.replace("\r\n", "")  # new lines take the note's line ending
    if private:
        assert after.visibility == "private"


def test_a_write_landing_while_a_page_is_rendered_is_written_back_on_the_next_pass(tmp_path, cli_json, local, monkeypatch):
    """The stamp recorded beside the written file is the one read before the render: a write that lands
    in between leaves the page due, so its text reaches the file on the next pass instead of never."""
    from memverbs.server.sync import writeback

    root = tmp_path / "v"
    write(root / "a.md", "# A\nOne.\n")
    cli_json("sync", root)
    local.ok("put_page", slug="a", content="# A\nTwo.\n")
    real = writeback.render_page
    landed = []

    def render_then_an_agent_writes(*args, **kwargs):
        out = real(*args, **kwargs)
        if not landed:
            landed.append(local.ok("put_page", slug="a", content="# A\nThree, from an agent.\n"))
        return out

    monkeypatch.setattr(writeback, "render_page", render_then_an_agent_writes)
    cli_json("sync", root)
    assert (root / "a.md").read_text() == "# A\nTwo.\n"  # what was rendered
    monkeypatch.setattr(writeback, "render_page", real)
    cli_json("sync", root)
    assert (root / "a.md").read_text() == "# A\nThree, from an agent.\n"
